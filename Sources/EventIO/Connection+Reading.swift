import CEvent

#if canImport(Glibc)
    import Glibc
#endif

/// Reading: the connection's own read event and one `readv` of up to ``readPiece`` bytes per
/// readable event, straight into the input buffer (``readAvailable(upTo:)`` takes more for bulk
/// relays). A bufferevent would read by itself, but libevent 2.1 asks the kernel how much is
/// waiting (`ioctl(FIONREAD)`) before every read: one system call more per read.
extension Connection {
    /// Stops reading from the socket (TCP flow control pushes back on the peer).
    public func pauseReading() {
        readWanted = false
        updateReading()
    }

    /// Whether ``pauseReading()`` holds reading back.
    public var isReadingPaused: Bool { !readWanted }

    /// Resumes reading after ``pauseReading()``.
    public func resumeReading() {
        guard bev != nil, !flushThenClose else { return }
        readWanted = true
        updateReading()
    }

    /// What one readable event reads unless told otherwise (libevent's own `EVBUFFER_MAX_READ`):
    /// the input buffer's pieces stay small, which matters where they are handed on whole to a
    /// slow peer's output, and a small message costs no large buffer.
    public static let smallReadPiece = 4096

    private static let readCallback: event_callback_fn = { _, what, context in
        Unmanaged<Connection>.fromOpaque(context!).takeUnretainedValue().socketReadable(what)
    }

    /// Creates the read event once the socket is connected (an accepted one at once, an outgoing
    /// one at `.connected`: a socket still connecting would report its failure twice).
    func installReading() {
        guard let bev, readEvent == nil else { return }
        let fd = bufferevent_getfd(bev)
        guard fd >= 0 else { return }
        readEvent = event_new(
            loop.base, fd, Int16(EV_READ | EV_PERSIST), Connection.readCallback,
            Unmanaged.passUnretained(self).toOpaque())
        updateReading()
    }

    /// Whether the read event should be pending: the owner wants input and the input buffer is
    /// below its high-water mark.
    var shouldRead: Bool { readWanted && (readHighWater == 0 || inputCount < readHighWater) }

    /// Arms or disarms the read event to match ``shouldRead`` (no call into libevent when it
    /// already does). A pending persistent event with a timeout restarts it on every read.
    func updateReading() {
        guard let readEvent else { return }
        let wanted = shouldRead
        guard wanted != readArmed else { return }
        readArmed = wanted
        if wanted { arm(readEvent) } else { event_del(readEvent) }
    }

    /// After a new read timeout: an armed read event starts counting again (as
    /// `bufferevent_set_timeouts` does), with the new timeout or none.
    func readTimeoutChanged() {
        guard readArmed, let readEvent, readTimeoutMilliseconds > 0 || readTimerSet else { return }
        // A timeout that expired in this loop pass has taken the event off the socket and queued
        // its callback: re-adding it as it is would revive only the timer. The new timeout
        // replaces the expired one.
        if event_pending(readEvent, Int16(EV_READ), nil) == 0 { event_del(readEvent) }
        arm(readEvent)
    }

    /// Adds the read event with the current timeout. libevent keeps a persistent event's last
    /// timeout through `event_del` and `event_add(ev, NULL)` and restores it when the event next
    /// fires; `event_remove_timer` forgets it, but only while a timeout is pending, so one is
    /// added first (no system call: the socket's registration is untouched).
    private func arm(_ readEvent: OpaquePointer) {
        if readTimeoutMilliseconds == 0, !readTimerSet {
            event_add(readEvent, nil)
            return
        }
        var timeout = timeval(milliseconds: max(readTimeoutMilliseconds, 1))
        event_add(readEvent, &timeout)
        if readTimeoutMilliseconds > 0 {
            readTimerSet = true
        } else {
            event_remove_timer(readEvent)
            readTimerSet = false
        }
    }

    /// The socket is readable, or the read timeout passed.
    private func socketReadable(_ what: Int16) {
        guard let bev else { return }
        if what & Int16(EV_TIMEOUT) != 0 {
            stopReading()
            return report(.timeout(reading: true))
        }
        guard let input = bufferevent_get_input(bev) else { return }
        var room = readPiece
        if readHighWater > 0 { room = min(room, readHighWater - evbuffer_get_length(input)) }
        guard room > 0 else { return updateReading() }
        let got = read(into: input, fd: bufferevent_getfd(bev), room: room)
        if got > 0 {
            lastReadFilled = got == room
            if readHighWater > 0 { updateReading() }
            return didRead()
        }
        let code = errno
        if got < 0, code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return }
        stopReading()
        report(got == 0 ? .endOfStream : .error(code: code, resolving: false))
    }

    /// Reads what the socket holds now, up to `limit` bytes of input in all, straight into the
    /// input buffer: for a bulk relay (a tunnel, a large body) after a read that filled all its
    /// room, so that more is likely waiting; small exchanges pay no extra call. The end of the
    /// stream or an error is left in the socket for the next readable event to report.
    public func readAvailable(upTo limit: Int) {
        guard let bev, lastReadFilled, let input = bufferevent_get_input(bev) else { return }
        let fd = bufferevent_getfd(bev)
        while evbuffer_get_length(input) < limit {
            let want = min(64 * 1024, limit - evbuffer_get_length(input))
            guard read(into: input, fd: fd, room: want) == want else {  // drained, or the end or an error
                lastReadFilled = false
                return
            }
        }
    }

    /// After the end of the stream, an error or a read timeout: no more reading until resumed
    /// (as a bufferevent does).
    private func stopReading() {
        readWanted = false
        updateReading()
    }

    /// One `readv` of up to `room` bytes into the input's free space (at most two pieces: the
    /// rest of its last chain and a new one); what was not filled is given back.
    private func read(into input: OpaquePointer, fd: Int32, room: Int) -> Int {
        var vectors = (iovec(), iovec())
        return withUnsafeMutableBytes(of: &vectors) { raw in
            let vector = raw.baseAddress!.assumingMemoryBound(to: iovec.self)
            // A bufferevent keeps its input's end frozen except while it is read into.
            evbuffer_unfreeze(input, 0)
            defer { evbuffer_freeze(input, 0) }
            let count = evbuffer_reserve_space(input, room, vector, 2)
            guard count > 0 else {
                errno = ENOMEM
                return -1
            }
            // The reservation may be larger than asked for: read no more than `room`.
            var left = room
            for index in 0..<Int(count) {
                vector[index].iov_len = min(vector[index].iov_len, left)
                left -= vector[index].iov_len
            }
            let got = readv(fd, vector, count)
            var filled = max(got, 0)
            for index in 0..<Int(count) {
                vector[index].iov_len = min(vector[index].iov_len, filled)
                filled -= vector[index].iov_len
            }
            let code = errno
            evbuffer_commit_space(input, vector, count)
            errno = code
            return got
        }
    }
}
