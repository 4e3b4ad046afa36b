import CEvent

#if canImport(Glibc)
    import Glibc
#endif

/// Receives a ``Connection``'s events on the loop thread.
public protocol ConnectionDelegate: AnyObject {
    /// New bytes are in the input buffer.
    func connectionDidRead(_ connection: Connection)
    /// The output buffer drained to (or below) its low-water mark.
    func connectionDidDrain(_ connection: Connection)
    /// End of stream, an error, a timeout or (for outgoing connections) the connection is up.
    func connection(_ connection: Connection, didReceive event: Connection.Event)
}

/// A TCP connection with input and output buffers (`bufferevent`).
///
/// The connection owns its descriptor and closes it in ``close()`` or `deinit`.
/// - SeeAlso: `bufferevent_socket_new(3)`, `bufferevent_setwatermark(3)`.
public final class Connection {
    /// What happened to the connection.
    public enum Event: Equatable, Sendable {
        /// The peer finished sending (FIN).
        case endOfStream
        /// A socket error; `code` is `errno`, or the resolver's error for failed lookups.
        case error(code: Int32, resolving: Bool)
        /// The read or write timeout set by ``setTimeouts(readMilliseconds:writeMilliseconds:)`` passed.
        case timeout(reading: Bool)
        /// An outgoing connection was established.
        case connected
    }

    private var bev: OpaquePointer?
    /// Receives this connection's events; not retained.
    public weak var delegate: (any ConnectionDelegate)?
    /// The peer's address, when known.
    public private(set) var peer: SocketAddress?
    private var flushThenClose = false
    private var lingerTimer: Timer?
    private let loop: EventLoop

    /// Wraps an accepted descriptor (it becomes non-blocking and owned by this object).
    public init(loop: EventLoop, fd: Int32, peer: SocketAddress?) {
        self.loop = loop
        self.peer = peer
        evutil_make_socket_nonblocking(fd)
        bev = bufferevent_socket_new(loop.base, fd, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue))
        install()
    }

    /// Starts an outgoing connection to `host:port` (a name is resolved with `resolver`);
    /// the delegate gets `.connected` or `.error`.
    public init(loop: EventLoop, connectingTo host: String, port: UInt16, resolver: DNSResolver) {
        self.loop = loop
        bev = bufferevent_socket_new(loop.base, -1, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue))
        install()
        if bufferevent_socket_connect_hostname(bev, resolver.base, AF_UNSPEC, host, Int32(port)) != 0 {
            let code = errno
            loop.callSoon { [weak self] in
                guard let self else { return }
                self.delegate?.connection(self, didReceive: .error(code: code, resolving: false))
            }
        }
    }

    deinit { if let bev { bufferevent_free(bev) } }

    private func install() {
        bufferevent_setcb(
            bev,
            { _, ctx in Unmanaged<Connection>.fromOpaque(ctx!).takeUnretainedValue().didRead() },
            { _, ctx in Unmanaged<Connection>.fromOpaque(ctx!).takeUnretainedValue().didDrain() },
            { _, what, ctx in Unmanaged<Connection>.fromOpaque(ctx!).takeUnretainedValue().didEvent(what) },
            Unmanaged.passUnretained(self).toOpaque())
        bufferevent_enable(bev, Int16(EV_READ | EV_WRITE))
    }

    // MARK: - State

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { bev == nil }

    /// The descriptor, or -1 once closed.
    public var fd: Int32 { bev.map { bufferevent_getfd($0) } ?? -1 }

    /// Bytes waiting in the input buffer.
    public var inputCount: Int { bev.map { evbuffer_get_length(bufferevent_get_input($0)) } ?? 0 }

    /// Bytes not yet written to the socket.
    public var outputCount: Int { bev.map { evbuffer_get_length(bufferevent_get_output($0)) } ?? 0 }

    /// The local address of the socket.
    public var localAddress: SocketAddress? { bev.flatMap { SocketAddress.local(of: bufferevent_getfd($0)) } }

    /// The remote address of the socket, read from the kernel.
    public var remoteAddress: SocketAddress? { bev.flatMap { SocketAddress.peer(of: bufferevent_getfd($0)) } }

    // MARK: - Reading

    /// Makes the first `count` input bytes contiguous and lends them to `body`.
    public func withInput<R>(upTo count: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard let bev else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        let input = bufferevent_get_input(bev)
        let length = min(count, evbuffer_get_length(input))
        guard length > 0, let base = evbuffer_pullup(input, length) else {
            return body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return body(UnsafeRawBufferPointer(start: base, count: length))
    }

    /// Lends the first contiguous run of input bytes (possibly fewer than are buffered).
    public func withFirstInputSegment<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard let bev else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        var vector = iovec()
        let found = evbuffer_peek(bufferevent_get_input(bev), -1, nil, &vector, 1)
        guard found > 0, vector.iov_len > 0 else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return body(UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len))
    }

    /// Discards `count` bytes from the front of the input buffer.
    public func drainInput(_ count: Int) {
        guard let bev, count > 0 else { return }
        evbuffer_drain(bufferevent_get_input(bev), count)
    }

    /// Moves up to `count` input bytes to `other`: straight to its socket when nothing is queued
    /// there (one `writev` from this buffer, no write event to arm), and what the socket does not
    /// take into its output without copying.
    @discardableResult
    public func moveInput(to other: Connection, upTo count: Int = Int.max) -> Int {
        guard let bev, let otherBev = other.bev else { return 0 }
        let input = bufferevent_get_input(bev)
        let amount = min(count, evbuffer_get_length(input))
        guard amount > 0 else { return 0 }
        if other.writeBroken {
            evbuffer_drain(input, amount)
            return amount
        }
        let output = bufferevent_get_output(otherBev)
        var moved = 0
        if other.directWrites, evbuffer_get_length(output) == 0 {
            let written = evbuffer_write_atmost(input, bufferevent_getfd(otherBev), amount)
            if written > 0 {
                moved = Int(written)
            } else if written < 0, other.peerGone(errno) {
                evbuffer_drain(input, amount)
                return amount
            }
        }
        if moved < amount { moved += Int(evbuffer_remove_buffer(input, output, amount - moved)) }
        return moved
    }

    /// Stops reading from the socket (TCP flow control pushes back on the peer).
    public func pauseReading() { if let bev { bufferevent_disable(bev, Int16(EV_READ)) } }

    /// Resumes reading after ``pauseReading()``.
    public func resumeReading() {
        guard let bev, !flushThenClose else { return }
        bufferevent_enable(bev, Int16(EV_READ))
    }

    // MARK: - Writing

    /// Writes bytes: straight to the socket when nothing is queued (no copy, no extra loop turn),
    /// and whatever the socket does not take now goes to the output buffer (copied).
    ///
    /// `more`: more of the same message follows at once (a streamed body), so the kernel may hold
    /// back a partial segment (`MSG_MORE`) instead of sending one small packet, and waking the
    /// peer, per write. What it holds goes out with the next write without `more`, or at the end
    /// of this loop turn at the latest. For sockets with `TCP_NODELAY` (``setNoDelay()``).
    public func write(_ bytes: UnsafeRawBufferPointer, more: Bool = false) {
        guard let bev, let base = bytes.baseAddress, bytes.count > 0, !writeBroken else { return }
        var offset = 0
        if directWrites, evbuffer_get_length(bufferevent_get_output(bev)) == 0 {
            let sent = send(bufferevent_getfd(bev), base, bytes.count, Connection.sendFlags(more: more))
            if sent > 0 { offset = sent } else if sent < 0, peerGone(errno) { return }
            noteHeld(more)
        }
        if offset < bytes.count { bufferevent_write(bev, base + offset, bytes.count - offset) }
    }

    private static func sendFlags(more: Bool) -> Int32 {
        Int32(MSG_NOSIGNAL | MSG_DONTWAIT) | (more ? Int32(MSG_MORE) : 0)
    }

    /// Whether a `more` write may have left a partial segment in the kernel.
    private var holding = false
    /// Pushes what `more` writes left held back, at the end of their loop turn.
    private lazy var pushTimer = Timer(loop: loop) { [unowned self] in
        guard holding, bev != nil else { return }
        holding = false
        setNoDelay()
    }

    private func noteHeld(_ more: Bool) {
        // A send without MSG_MORE pushes out everything queued before it.
        holding = more
        if more { pushTimer.fireSoon() }  // already due: no-op
    }

    /// Writes two pieces in one system call when nothing is queued (`sendmsg`), else queues them;
    /// `more` as in ``write(_:more:)``.
    public func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, more: Bool = false) {
        write(pieces: (first, second, UnsafeRawBufferPointer(start: nil, count: 0)), count: 2, more: more)
    }

    /// Writes three pieces in one system call when nothing is queued (`sendmsg`), else queues them.
    public func write(
        _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, _ third: UnsafeRawBufferPointer,
        more: Bool = false
    ) {
        write(pieces: (first, second, third), count: 3, more: more)
    }

    /// Writes four pieces in two system calls when nothing is queued, else queues them.
    public func write(
        _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, _ third: UnsafeRawBufferPointer,
        _ fourth: UnsafeRawBufferPointer, more: Bool = false
    ) {
        guard let bev, !writeBroken else { return }
        if directWrites, evbuffer_get_length(bufferevent_get_output(bev)) == 0 {
            write(pieces: (first, second, third), count: 3, more: true)
            return write(fourth, more: more)
        }
        for piece in [first, second, third, fourth] where piece.count > 0 {
            bufferevent_write(bev, piece.baseAddress!, piece.count)
        }
    }

    /// The body of the multi-piece writes: the pieces stay on the stack (no array per write).
    private func write(
        pieces: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer), count: Int, more: Bool
    ) {
        guard let bev, !writeBroken else { return }
        var skip = 0
        if directWrites, evbuffer_get_length(bufferevent_get_output(bev)) == 0 {
            func vector(_ piece: UnsafeRawBufferPointer) -> iovec {
                iovec(iov_base: UnsafeMutableRawPointer(mutating: piece.baseAddress), iov_len: piece.count)
            }
            var vectors = (vector(pieces.0), vector(pieces.1), vector(pieces.2))
            let sent = withUnsafeMutableBytes(of: &vectors) { raw in
                var message = msghdr()
                message.msg_iov = raw.baseAddress!.assumingMemoryBound(to: iovec.self)
                message.msg_iovlen = count
                return sendmsg(bufferevent_getfd(bev), &message, Connection.sendFlags(more: more))
            }
            if sent > 0 { skip = sent } else if sent < 0, peerGone(errno) { return }
            noteHeld(more)
        }
        // Whatever the socket did not take is queued, in order.
        func queue(_ piece: UnsafeRawBufferPointer) {
            guard let base = piece.baseAddress, piece.count > 0 else { return }
            if skip >= piece.count {
                skip -= piece.count
                return
            }
            bufferevent_write(bev, base + skip, piece.count - skip)
            skip = 0
        }
        queue(pieces.0)
        queue(pieces.1)
        if count == 3 { queue(pieces.2) }
    }

    /// Writes `head`, then bytes `range` of `file` sent by the kernel from the file's pages
    /// (`sendfile`): nothing of the file is copied through user space. Directly when nothing is
    /// queued; what the socket does not take now is queued (the head copied, the file's part by
    /// reference) and goes out as the socket drains. The file's part ends the write (no `more`).
    public func write(_ head: UnsafeRawBufferPointer, file: SharedFile, range: Range<Int>) {
        guard let bev, !writeBroken else { return }
        let output = bufferevent_get_output(bev)
        var headSent = 0
        var offset = range.lowerBound
        if directWrites, evbuffer_get_length(output) == 0 {
            let fd = bufferevent_getfd(bev)
            if let base = head.baseAddress, head.count > 0 {
                // MSG_MORE: the head waits for the file's first bytes to fill its packet.
                let sent = send(fd, base, head.count, Connection.sendFlags(more: !range.isEmpty))
                if sent > 0 { headSent = sent } else if sent < 0, peerGone(errno) { return }
            }
            if headSent == head.count, !range.isEmpty {
                var position = off_t(offset)
                let sent = sendfile(fd, file.fd, &position, range.upperBound - offset)
                if sent > 0 { offset += sent } else if sent < 0, peerGone(errno) { return }
            }
            // A head held back by MSG_MORE with no file bytes after it yet goes out at the end of the turn.
            noteHeld(offset < range.upperBound)
        }
        if headSent < head.count, let base = head.baseAddress {
            bufferevent_write(bev, base + headSent, head.count - headSent)
        }
        if offset < range.upperBound {
            evbuffer_add_file_segment(output, file.segment, Int64(offset), Int64(range.upperBound - offset))
        }
    }

    /// Set once a write found the peer gone: what is written after that is dropped, not queued
    /// (a dead client must not hold a body's worth of memory until its error event arrives);
    /// writers should stop producing.
    public private(set) var writeBroken = false

    /// After a failed direct write: `true` (and an `.error` event at the next loop turn, never
    /// from inside the write) when the socket is dead rather than full.
    private func peerGone(_ code: Int32) -> Bool {
        guard code != EAGAIN, code != EWOULDBLOCK, code != EINTR, code != ENOBUFS, code != ENOMEM else {
            return false
        }
        writeBroken = true
        if let bev { evbuffer_drain(bufferevent_get_output(bev), evbuffer_get_length(bufferevent_get_output(bev))) }
        loop.callSoon { [weak self] in
            guard let self, !self.isClosed else { return }
            self.delegate?.connection(self, didReceive: .error(code: code, resolving: false))
        }
        return true
    }

    /// Whether ``write(_:)`` may write to the socket directly; `true` except while flushing to close.
    private var directWrites: Bool { !flushThenClose }

    /// Appends an array's bytes to the output buffer.
    public func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { write($0) } }

    /// Appends a string's UTF-8 bytes to the output buffer.
    public func write(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    /// Sets the read high-water mark (reading pauses above it) and the write low-water mark
    /// (``ConnectionDelegate/connectionDidDrain(_:)`` fires at or below it); 0 means unlimited / empty.
    public func setWatermarks(readHigh: Int, writeLow: Int) {
        guard let bev else { return }
        bufferevent_setwatermark(bev, Int16(EV_READ), 0, readHigh)
        bufferevent_setwatermark(bev, Int16(EV_WRITE), writeLow, 0)
    }

    /// The most one read or one write moves (libevent's default is 16 KiB): larger for
    /// connections that relay bulk bytes, fewer system calls and callbacks per megabyte.
    /// - SeeAlso: `bufferevent_set_max_single_read(3)`.
    public func setMaxSingleIO(_ bytes: Int) {
        guard let bev else { return }
        _ = bufferevent_set_max_single_read(bev, bytes)
        _ = bufferevent_set_max_single_write(bev, bytes)
    }

    /// Read and write inactivity timeouts; 0 disables one.
    public func setTimeouts(readMilliseconds: Int, writeMilliseconds: Int) {
        guard let bev else { return }
        var read = timeval(milliseconds: readMilliseconds)
        var write = timeval(milliseconds: writeMilliseconds)
        withUnsafePointer(to: &read) { readPointer in
            withUnsafePointer(to: &write) { writePointer in
                _ = bufferevent_set_timeouts(
                    bev, readMilliseconds > 0 ? readPointer : nil, writeMilliseconds > 0 ? writePointer : nil)
            }
        }
    }

    /// Turns off Nagle's algorithm so small responses leave at once; it also pushes out what writes
    /// with `more` left held back (tcp(7)).
    public func setNoDelay() {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Sends FIN after the bytes already written (half-close).
    public func shutdownWrite() {
        guard let bev else { return }
        if evbuffer_get_length(bufferevent_get_output(bev)) == 0 {
            shutdown(bufferevent_getfd(bev), Int32(SHUT_WR))
        } else {
            pendingShutdown = true
        }
    }
    private var pendingShutdown = false

    // MARK: - Closing

    /// Closes at once; unwritten output is dropped.
    public func close() {
        lingerTimer?.cancel()
        lingerTimer = nil
        guard let bev else { return }
        self.bev = nil
        bufferevent_free(bev)
    }

    /// Closes with a reset (RST), so the peer cannot mistake a cut-off body for a complete one.
    public func reset() {
        guard bev != nil else { return }
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    /// Writes what is buffered, sends FIN, then reads and discards for up to `lingerMilliseconds`
    /// so that the peer sees the response before the close (no RST over unread input).
    /// The delegate hears nothing more.
    public func closeAfterFlush(lingerMilliseconds: Int = 2000) {
        guard bev != nil, !flushThenClose else { return }
        flushThenClose = true
        lingerTimer = Timer(loop: loop) { [unowned self] in self.close() }
        lingerTimer?.schedule(milliseconds: lingerMilliseconds)
        setWatermarks(readHigh: 0, writeLow: 0)
        if outputCount == 0 { finishFlushedClose() }
    }

    private func finishFlushedClose() {
        guard let bev else { return }
        shutdown(bufferevent_getfd(bev), Int32(SHUT_WR))
        bufferevent_enable(bev, Int16(EV_READ))
    }

    // MARK: - Callbacks

    private func didRead() {
        if flushThenClose {
            drainInput(inputCount)
            return
        }
        delegate?.connectionDidRead(self)
    }

    private func didDrain() {
        if writeBroken { return }  // emptied because the peer is gone, not because it read
        if flushThenClose {
            if outputCount == 0 { finishFlushedClose() }
            return
        }
        if pendingShutdown, outputCount == 0, let bev {
            pendingShutdown = false
            shutdown(bufferevent_getfd(bev), Int32(SHUT_WR))
        }
        delegate?.connectionDidDrain(self)
    }

    private func didEvent(_ what: Int16) {
        if flushThenClose {
            if what & Int16(BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT) != 0 { close() }
            return
        }
        let event: Event
        if what & Int16(BEV_EVENT_CONNECTED) != 0 {
            if peer == nil { peer = remoteAddress }
            event = .connected
        } else if what & Int16(BEV_EVENT_TIMEOUT) != 0 {
            event = .timeout(reading: what & Int16(BEV_EVENT_READING) != 0)
        } else if what & Int16(BEV_EVENT_EOF) != 0 {
            event = .endOfStream
        } else {
            let dnsError = bev.map { bufferevent_socket_get_dns_error($0) } ?? 0
            event = .error(code: dnsError != 0 ? dnsError : errno, resolving: dnsError != 0)
        }
        delegate?.connection(self, didReceive: event)
    }
}
