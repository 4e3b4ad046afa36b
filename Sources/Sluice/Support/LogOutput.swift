import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Log lines gathered in memory and written in large pieces, the way nginx's
/// `access_log … buffer=64k flush=1s` does: a line costs a copy, not a system call. The buffer
/// is handed to a writer thread when it reaches 64 KiB, when a line of `notice` or above arrives
/// (start, stop, problems: they are seen at once, after every line before them), on ``flush()``
/// — which the proxy's loop calls every second — and when the proxy stops (SIGTERM and SIGINT
/// included; ``flush(waitingUpTo:)`` then waits for the writes).
///
/// For a pipe, a terminal or a socket, the writes happen on that thread, never on the caller's:
/// a standard output nobody reads (a pipe into a paused pager, a terminal on hold) blocks the
/// thread, not the proxy's loop. A regular file, which nothing stalls, is written in place. While
/// it is blocked, at most ``backlog`` bytes wait for it (besides the piece it is writing, at
/// most as much again); lines past that are dropped whole, and once the output moves again one
/// line says how many went. A `critical` line waits until written (up to a second): it may be
/// the last before the process ends.
public final class LogOutput: Sendable {
    /// Standard output, where `sluice serve` logs.
    public static let standardOutput = LogOutput(descriptor: 1)

    /// Buffered bytes past which they are handed to the writer at once.
    public static let capacity = 64 * 1024

    /// Bytes that may wait for a blocked output before lines are dropped.
    public static let backlog = 4 << 20

    /// Where the writer is.
    private enum Writer {
        /// No thread yet (nothing was handed over).
        case none
        /// Waiting for bytes.
        case idle
        /// In `write(2)` with bytes taken from the queue.
        case writing
    }

    private struct State {
        var buffer: [UInt8] = []
        /// Handed over, not yet taken by the writer.
        var queued: [UInt8] = []
        /// Lines dropped since the writer last took the queue (it was full).
        var dropped = 0
        var writer = Writer.none
        var second: time_t = -1
        var timestamp = ""
    }

    private let descriptor: Int32
    private let limit: Int
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    /// Lines for `descriptor`, which stays open for the life of the process; at most `backlog`
    /// bytes wait for it while it does not take them. Its writer thread, started by the first
    /// lines handed over, lives as long as the process (so does the output it writes for).
    public init(descriptor: Int32, backlog: Int = LogOutput.backlog) {
        self.descriptor = descriptor
        self.limit = backlog
        var status = stat()
        inPlace = fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    /// Whether the output is a regular file (`> sluice.log`, a service's journal file), which no
    /// reader can stall: written in place, as the lines are handed over, with no thread. Pipes,
    /// terminals and sockets go through the writer thread.
    private let inPlace: Bool

    /// Adds `line` and a newline; hands everything to the writer when `urgent` or when the
    /// buffer is full.
    public func append(_ line: String, urgent: Bool = false) {
        state.withLock { state in
            state.buffer.append(contentsOf: line.utf8)
            state.buffer.append(0x0A)
            if urgent || state.buffer.count >= Self.capacity { handOff(&state) }
        }
    }

    /// Adds one line built in place by `build` (which appends its bytes, without the newline),
    /// with no intermediate string; handed to the writer when the buffer is full.
    public func appendLine(_ build: (inout [UInt8]) -> Void) {
        state.withLock { state in
            build(&state.buffer)
            state.buffer.append(0x0A)
            if state.buffer.count >= Self.capacity { handOff(&state) }
        }
    }

    /// Hands whatever is buffered to the writer, without waiting for it.
    public func flush() {
        state.withLock { state in if !state.buffer.isEmpty { handOff(&state) } }
    }

    /// Hands whatever is buffered to the writer and waits until it is written, at most `seconds`
    /// (an output nobody reads must not keep a stopping process alive). Whether it all went.
    @discardableResult
    public func flush(waitingUpTo seconds: Double) -> Bool {
        flush()
        let deadline = Date(timeIntervalSinceNow: seconds)
        while true {
            let done = state.withLock { state in
                switch state.writer {
                case .none: true
                case .idle: state.queued.isEmpty && state.dropped == 0
                case .writing: false
                }
            }
            if done { return true }
            if Date() >= deadline { return false }
            usleep(1000)
        }
    }

    /// Bytes gathered and not yet handed to the writer.
    public var pending: Int { state.withLock { $0.buffer.count } }

    /// The local time as `2026-11-24T10:16:02+0000` (what swift-log's stream handler writes),
    /// formatted once per second.
    public func timestamp() -> String {
        state.withLock { state in
            var now = time(nil)
            if now != state.second {
                state.second = now
                var parts = tm()
                localtime_r(&now, &parts)
                var text = [CChar](repeating: 0, count: 64)
                let count = strftime(&text, text.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
                state.timestamp = String(decoding: text[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            return state.timestamp
        }
    }

    /// Moves the buffer to the writer's queue (or, when the queue is full, counts its lines as
    /// dropped), keeping the buffer's memory, and wakes the writer; starts it the first time.
    private func handOff(_ state: inout State) {
        if inPlace {
            write(state.buffer)
            state.buffer.removeAll(keepingCapacity: true)
            return
        }
        // Once lines are dropped, all are until the writer takes the queue: the count it then
        // writes stands where they were.
        if state.dropped == 0, state.queued.count + state.buffer.count <= limit {
            if state.queued.isEmpty {
                swap(&state.queued, &state.buffer)
            } else {
                state.queued.append(contentsOf: state.buffer)
            }
        } else {
            state.dropped += state.buffer.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        }
        state.buffer.removeAll(keepingCapacity: true)
        if case .none = state.writer {
            state.writer = .idle
            let thread = Thread { [self] in writeForever() }
            thread.name = "sluice-log"
            thread.start()
        }
        wake.signal()
    }

    /// The writer thread: takes the queue, writes it, then says how many lines were dropped
    /// while it waited, if any.
    private func writeForever() {
        var chunk: [UInt8] = []
        while true {
            wake.wait()
            while true {
                let dropped = state.withLock { state -> Int? in
                    guard !state.queued.isEmpty || state.dropped > 0 else {
                        state.writer = .idle
                        return nil
                    }
                    swap(&chunk, &state.queued)
                    state.writer = .writing
                    defer { state.dropped = 0 }
                    return state.dropped
                }
                guard let dropped else { break }
                write(chunk)
                chunk.removeAll(keepingCapacity: chunk.capacity <= 2 * Self.capacity)
                if dropped > 0 {
                    write(
                        Array(
                            "\(timestamp()) warning sluice: [Sluice] \(dropped) log lines dropped: the output did not take them (at most \(limit) bytes wait)\n"
                                .utf8))
                }
            }
        }
    }

    /// Writes all of `bytes` (short writes and interruptions retried). What cannot be written (a
    /// closed descriptor) is dropped, never retried forever.
    private func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else if written < 0, errno == EAGAIN {
                    // A descriptor someone made non-blocking: wait until it takes bytes again.
                    var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&ready, 1, 1000)
                } else {
                    break
                }
            }
        }
    }
}

/// A swift-log handler writing through a ``LogOutput`` in the format of swift-log's
/// `StreamLogHandler` (`<time> <level> <label>: [metadata] [<source>] <message>`), so that
/// lines read as before; `notice` and above are written at once.
public struct BufferedLogHandler: LogHandler {
    private let label: String
    private let output: LogOutput
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]

    /// - Parameters:
    ///   - label: the logger's label.
    ///   - output: where lines go; standard output by default.
    public init(label: String, output: LogOutput = .standardOutput) {
        self.label = label
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = metadata
        if let explicit = event.metadata { fields.merge(explicit) { $1 } }
        var line = output.timestamp() + " " + event.level.rawValue + " " + label + ":"
        if !fields.isEmpty {
            line += " " + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        line += " [" + event.source + "] " + event.message.description
        output.append(line, urgent: event.level >= .notice)
        if event.level == .critical { output.flush(waitingUpTo: 1) }
    }

    /// An `info` line from `source`, its message written in place by `message` (the access log's
    /// path: one copy into the buffer, no logger event). Always inlined: the caller's closure then
    /// needs no context, which otherwise copies what it captures (the access log's whole record).
    @inline(__always)
    public func info(source: String, _ message: (inout [UInt8]) -> Void) {
        let timestamp = output.timestamp()
        output.appendLine { buffer in
            buffer.append(utf8: timestamp)
            buffer.append(" info ")
            buffer.append(utf8: label)
            buffer.append(": [")
            buffer.append(utf8: source)
            buffer.append("] ")
            message(&buffer)
        }
    }
}
