import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Log lines gathered in memory and written in large pieces, the way nginx's
/// `access_log … buffer=64k flush=1s` does: a line costs a copy, not a system call. The buffer
/// is written when it reaches 64 KiB, when a line of `notice` or above arrives (start, stop,
/// problems: they are seen at once, after every line before them), on ``flush()`` — which the
/// proxy's loop calls every second — and when the proxy stops (SIGTERM and SIGINT included).
public final class LogOutput: Sendable {
    /// Standard output, where `sluice serve` logs.
    public static let standardOutput = LogOutput(descriptor: 1)

    /// Buffered bytes past which they are written at once.
    public static let capacity = 64 * 1024

    private struct State {
        var buffer: [UInt8] = []
        var second: time_t = -1
        var timestamp = ""
    }

    private let descriptor: Int32
    private let state = Mutex(State())

    /// Lines for `descriptor`, which stays open for the life of the process.
    public init(descriptor: Int32) { self.descriptor = descriptor }

    /// Adds `line` and a newline; writes everything out when `urgent` or when the buffer is full.
    public func append(_ line: String, urgent: Bool = false) {
        state.withLock { state in
            state.buffer.append(contentsOf: line.utf8)
            state.buffer.append(0x0A)
            if urgent || state.buffer.count >= Self.capacity { write(&state.buffer) }
        }
    }

    /// Adds one line built in place by `build` (which appends its bytes, without the newline),
    /// with no intermediate string; written out when the buffer is full.
    public func appendLine(_ build: (inout [UInt8]) -> Void) {
        state.withLock { state in
            build(&state.buffer)
            state.buffer.append(0x0A)
            if state.buffer.count >= Self.capacity { write(&state.buffer) }
        }
    }

    /// Writes whatever is buffered.
    public func flush() {
        state.withLock { state in if !state.buffer.isEmpty { write(&state.buffer) } }
    }

    /// Bytes waiting to be written.
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

    /// Writes all of `buffer` (short writes and interruptions retried), then empties it, keeping
    /// its memory. Lines that cannot be written (a closed descriptor) are dropped, never retried
    /// forever.
    private func write(_ buffer: inout [UInt8]) {
        buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR || errno == EAGAIN {
                    continue
                } else {
                    break
                }
            }
        }
        buffer.removeAll(keepingCapacity: true)
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
