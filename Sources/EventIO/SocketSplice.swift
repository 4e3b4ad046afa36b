import CEvent

#if canImport(Glibc)
    import Glibc
#endif

/// Moves a body from one connection's socket to another's inside the kernel: `splice(2)` from the
/// source socket into a pipe, then from the pipe into the sink socket. The bytes never come to
/// user space, so a large pass-through body costs neither of the two copies a read and a write
/// make, nor a buffer. Driven by readiness: it waits for the source while the pipe is empty and
/// for the sink while the pipe holds bytes, so a slow sink holds the source back by TCP flow
/// control as a paused read would.
///
/// Both connections must be plain sockets with nothing buffered in user space (the source's input
/// and the sink's output empty), or the order of bytes would break. The source's own reading is
/// paused from ``start()``; its owner resumes it afterwards.
public final class SocketSplice {
    /// How a splice ended.
    public enum Outcome: Equatable, Sendable {
        /// All the bytes asked for moved.
        case moved
        /// The source's stream ended first (with no count asked, that is the end of the body).
        case sourceEnded
        /// Reading the source failed (its error code), or it sent nothing for the timeout (`nil`).
        case sourceFailed(code: Int32?)
        /// The sink is gone or took nothing for the timeout: its connection reports that to its
        /// own delegate as it would for a write.
        case sinkFailed
    }

    /// What one readiness wakeup moves at most before it lets the loop serve others.
    static let turnLimit = 1 << 20
    /// The pipe's size asked for (the kernel's default is 64 KiB: more calls per megabyte).
    static let pipeSize: Int32 = 256 * 1024

    /// Bytes that reached the sink.
    public private(set) var moved: Int64 = 0

    private let source: Connection
    private let sink: Connection
    /// Bytes still to move; `nil`: until the source ends.
    private var left: Int64?
    private let sourceFD: Int32
    private let sinkFD: Int32
    private var pipe: (read: Int32, write: Int32)
    private let capacity: Int
    /// Bytes in the pipe, read from the source and not yet taken by the sink.
    private var inPipe = 0
    /// How long a wait for the source may last (0: no limit); the sink's is its write timeout.
    private let timeoutMilliseconds: Int
    private var sourceEvent: OpaquePointer?
    private var sinkEvent: OpaquePointer?
    private var done: ((Outcome) -> Void)?

    /// A splice of `count` bytes (`nil`: until the source ends) from `source` to `sink`, or `nil`
    /// when it cannot be: a connection closed, bytes buffered on either side, no pipe to be had.
    /// `timeoutMilliseconds` (0: none) bounds each wait for the source; each wait for the sink is
    /// bounded by the sink's write timeout, as its queued writes would be. `done` hears the outcome
    /// once, from a readiness event (never from inside ``start()`` or ``cancel()``).
    public init?(
        loop: EventLoop, from source: Connection, to sink: Connection, count: Int64?, timeoutMilliseconds: Int,
        done: @escaping (Outcome) -> Void
    ) {
        sink.sendHeld(more: true)  // what was written before the body goes before it
        guard source.fd >= 0, sink.fd >= 0, source.inputCount == 0, sink.outputCount == 0, !sink.writeBroken
        else { return nil }
        var fds: (Int32, Int32) = (-1, -1)
        let made = withUnsafeMutableBytes(of: &fds) { sluice_pipe($0.baseAddress!.assumingMemoryBound(to: Int32.self)) }
        guard made == 0 else { return nil }
        let size = sluice_set_pipe_size(fds.1, SocketSplice.pipeSize)  // what it holds, if not that
        capacity = size > 0 ? Int(size) : 4096
        pipe = (fds.0, fds.1)
        self.source = source
        self.sink = sink
        sourceFD = source.fd
        sinkFD = sink.fd
        left = count
        self.timeoutMilliseconds = timeoutMilliseconds
        self.done = done
        let context = Unmanaged.passUnretained(self).toOpaque()
        sourceEvent = event_new(
            loop.base, sourceFD, Int16(EV_READ | EV_PERSIST),
            { _, what, context in
                Unmanaged<SocketSplice>.fromOpaque(context!).takeUnretainedValue().ready(.source, what)
            }, context)
        sinkEvent = event_new(
            loop.base, sinkFD, Int16(EV_WRITE | EV_PERSIST),
            { _, what, context in
                Unmanaged<SocketSplice>.fromOpaque(context!).takeUnretainedValue().ready(.sink, what)
            }, context)
        guard sourceEvent != nil, sinkEvent != nil else { return nil }  // deinit frees what was made
    }

    deinit {
        release()
    }

    /// Starts moving: the source's own reading pauses, and the first bytes move when it is readable.
    public func start() {
        source.pauseReading()
        wait(for: .source)
    }

    /// Stops without telling anyone; what the pipe held is dropped.
    public func cancel() {
        done = nil
        release()
    }

    // MARK: - Moving

    /// The side a wait is for.
    private enum Side {
        case source
        case sink
    }

    private func ready(_ side: Side, _ what: Int16) {
        guard done != nil else { return }
        // A connection closed under the splice: its descriptor may be someone else's by now.
        if source.fd != sourceFD { return finish(.sourceFailed(code: EBADF)) }
        if sink.fd != sinkFD { return finish(.sinkFailed) }
        if what & Int16(EV_TIMEOUT) != 0 {
            switch side {
            case .source:
                finish(.sourceFailed(code: nil))
            case .sink:
                // The sink's delegate hears first, as of a write that timed out (its owner
                // cancels this splice); the owner of the splice then, if it still runs.
                sink.report(.timeout(reading: false))
                if done != nil { finish(.sinkFailed) }
            }
            return
        }
        pump()
    }

    /// Fills the pipe from the source while it is empty, and empties it into the sink, until one
    /// side has to be waited for, the body is done, or this turn moved its share.
    private func pump() {
        var budget = SocketSplice.turnLimit
        while done != nil {
            if inPipe > 0 {
                let sent = sluice_splice(pipe.read, sinkFD, inPipe, sluice_splice_move | sluice_splice_nonblock)
                if sent > 0 {
                    inPipe -= sent
                    moved += Int64(sent)
                    budget -= sent
                    continue
                }
                let code = errno
                if sent < 0, code == EINTR { continue }
                if sent < 0, code == EAGAIN || code == EWOULDBLOCK { return wait(for: .sink) }
                // The sink is gone: its connection says so to its delegate, as a failed write does.
                _ = sink.peerGone(sent == 0 ? EPIPE : code)
                return finish(.sinkFailed)
            }
            if left == 0 { return finish(.moved) }
            if budget <= 0 { return wait(for: .source) }  // the next turn goes on
            let want = min(capacity, Int(clamping: left ?? Int64.max))
            let got = sluice_splice(sourceFD, pipe.write, want, sluice_splice_move | sluice_splice_nonblock)
            if got > 0 {
                inPipe = got
                if let count = left { left = count - Int64(got) }
                continue
            }
            let code = errno
            if got == 0 { return finish(.sourceEnded) }
            if code == EINTR { continue }
            // The pipe is empty here, so this is the source having nothing for now.
            if code == EAGAIN || code == EWOULDBLOCK { return wait(for: .source) }
            return finish(.sourceFailed(code: code))
        }
    }

    /// Waits for one side only (the other's event is off, so a ready side that is not wanted
    /// never spins the loop).
    private func wait(for side: Side) {
        guard let sourceEvent, let sinkEvent else { return }
        let (event, other, milliseconds) =
            switch side {
            case .source: (sourceEvent, sinkEvent, timeoutMilliseconds)
            case .sink: (sinkEvent, sourceEvent, sink.writeTimeoutMilliseconds)
            }
        event_del(other)
        guard milliseconds > 0 else {
            event_add(event, nil)
            return
        }
        var timeout = timeval(milliseconds: milliseconds)
        event_add(event, &timeout)
    }

    private func finish(_ outcome: Outcome) {
        let done = self.done
        self.done = nil
        release()
        done?(outcome)
    }

    /// Frees the events and closes the pipe (once).
    private func release() {
        for event in [sourceEvent, sinkEvent] {
            if let event {
                event_del(event)
                event_free(event)
            }
        }
        sourceEvent = nil
        sinkEvent = nil
        if pipe.read >= 0 {
            Glibc.close(pipe.read)
            Glibc.close(pipe.write)
            pipe = (-1, -1)
        }
    }
}
