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

    var bev: OpaquePointer?
    /// Receives this connection's events; not retained (weakly held: nothing is told once it is
    /// gone). Setting it replaces an owning delegate (``setOwningDelegate(_:)``).
    public var delegate: (any ConnectionDelegate)? {
        get { owningDelegate ?? weakDelegate }
        set {
            owningDelegate = nil
            weakDelegate = newValue
        }
    }
    private weak var weakDelegate: (any ConnectionDelegate)?
    /// A delegate that owns this connection, held unowned: a weak reference gives its object a
    /// side table, and then every retain and release of it takes the slow path (a client's or
    /// an origin's connection object, many times a request).
    private unowned var owningDelegate: (any ConnectionDelegate)?

    /// Makes `owner` the delegate, held unowned: it must set ``delegate`` to `nil` (or another)
    /// before it goes, in its `deinit` at the latest, as its connection may outlive it.
    public func setOwningDelegate(_ owner: any ConnectionDelegate) {
        weakDelegate = nil
        owningDelegate = owner
    }
    /// The peer's address, when known.
    public private(set) var peer: SocketAddress?
    var flushThenClose = false
    private var lingerTimer: Timer?
    let loop: EventLoop

    /// The socket's read event (``Connection+Reading``), once there is a connected socket.
    var readEvent: OpaquePointer?
    /// Whether the owner wants input (``pauseReading()`` and the end of the stream turn it off).
    var readWanted = true
    /// Whether the read event is pending in the loop now.
    var readArmed = false
    /// Reading pauses while this many input bytes wait (0: no limit).
    var readHighWater = 0
    /// The read inactivity timeout; 0: none.
    public internal(set) var readTimeoutMilliseconds = 0
    /// The write inactivity timeout; 0: none.
    public private(set) var writeTimeoutMilliseconds = 0
    /// Whether the read event was last added with a timeout (libevent remembers it).
    var readTimerSet = false
    /// Whether the last read filled all the room it had (more is likely waiting).
    var lastReadFilled = false
    /// The most one readable event reads: ``smallReadPiece`` for messages; an owner relaying a
    /// large body sets more, so that each event is one system call and one piece to pass on
    /// (a small first read left the rest to a second call and a second piece).
    public var readPiece = Connection.smallReadPiece

    /// Wraps an accepted descriptor (it becomes non-blocking and owned by this object).
    public init(loop: EventLoop, fd: Int32, peer: SocketAddress?) {
        self.loop = loop
        self.peer = peer
        evutil_make_socket_nonblocking(fd)
        bev = bufferevent_socket_new(loop.base, fd, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue))
        install()
        installReading()
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

    /// Starts an outgoing connection to `address` (already resolved and checked by the caller);
    /// the delegate gets `.connected` or `.error`. - SeeAlso: `bufferevent_socket_connect(3)`.
    public init(loop: EventLoop, connectingTo address: SocketAddress) {
        self.loop = loop
        peer = address
        bev = bufferevent_socket_new(loop.base, -1, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue))
        install()
        let started = address.withSockaddr { pointer, length in
            bufferevent_socket_connect(bev, UnsafeMutablePointer(mutating: pointer), length)
        }
        if started != 0 {
            let code = errno
            loop.callSoon { [weak self] in
                guard let self else { return }
                self.delegate?.connection(self, didReceive: .error(code: code, resolving: false))
            }
        }
    }

    deinit {
        if let readEvent { event_free(readEvent) }
        if let bev { bufferevent_free(bev) }
    }

    /// The bufferevent writes, connects and reports write events; reading is the connection's own
    /// (`Connection+Reading.swift`).
    private func install() {
        bufferevent_setcb(
            bev,
            { _, ctx in Unmanaged<Connection>.fromOpaque(ctx!).takeUnretainedValue().didRead() },
            { _, ctx in Unmanaged<Connection>.fromOpaque(ctx!).takeUnretainedValue().didDrain() },
            { _, what, ctx in Unmanaged<Connection>.fromOpaque(ctx!).takeUnretainedValue().didEvent(what) },
            Unmanaged.passUnretained(self).toOpaque())
        bufferevent_enable(bev, Int16(EV_WRITE))
    }

    /// Bytes written in a busy loop turn, sent at its end (``Connection+Holding``).
    var held: [UInt8] = []
    /// Whether a `more` write may have left a partial segment in the kernel.
    var holding = false
    /// Whether the loop pushes this connection's partial segment at the end of the turn.
    var pushDue = false
    /// Set once a write found the peer gone: what is written after that is dropped, not queued
    /// (a dead client must not hold a body's worth of memory until its error event arrives);
    /// writers should stop producing.
    public internal(set) var writeBroken = false

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
        if readHighWater > 0 { updateReading() }
    }

    /// Moves up to `count` input bytes to `other`: straight to its socket when nothing is queued
    /// there (one `writev` from this buffer, no write event to arm), and what the socket does not
    /// take into its output without copying.
    @discardableResult
    public func moveInput(to other: Connection, upTo count: Int = Int.max) -> Int {
        other.sendHeld(more: true)
        guard let bev, let otherBev = other.bev else { return 0 }
        let input = bufferevent_get_input(bev)
        let amount = min(count, evbuffer_get_length(input))
        guard amount > 0 else { return 0 }
        defer { if readHighWater > 0 { updateReading() } }
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

    /// Whether the socket holds unread bytes or its peer's end right now (one non-blocking peek,
    /// nothing consumed): after bytes were taken from it past the input buffer (``SocketSplice``),
    /// the test for "nothing arrived beyond the end" that the input buffer's count is otherwise.
    public var hasWaitingInput: Bool {
        guard let bev else { return false }
        return Connection.waitingInput(on: bufferevent_getfd(bev)) != .nothing
    }

    /// What a socket holds unread right now, by one non-blocking peek (nothing consumed).
    public enum WaitingInput: Sendable {
        case nothing
        case bytes
        /// The peer's end, or an error.
        case end
    }

    /// What `fd` holds unread right now (for sockets owned elsewhere too: libcurl's).
    public static func waitingInput(on fd: Int32) -> WaitingInput {
        var byte: UInt8 = 0
        let got = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if got > 0 { return .bytes }
        return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? .nothing : .end
    }

    /// Sets the read high-water mark (reading pauses above it) and the write low-water mark
    /// (``ConnectionDelegate/connectionDidDrain(_:)`` fires at or below it); 0 means unlimited / empty.
    public func setWatermarks(readHigh: Int, writeLow: Int) {
        guard let bev else { return }
        readHighWater = readHigh
        bufferevent_setwatermark(bev, Int16(EV_WRITE), writeLow, 0)
        updateReading()
    }

    /// The most one write moves (libevent's default is 16 KiB): larger for connections that
    /// relay bulk bytes, fewer system calls and callbacks per megabyte (their reads go on with
    /// ``readAvailable(upTo:)``). - SeeAlso: `bufferevent_set_max_single_write(3)`.
    public func setMaxSingleIO(_ bytes: Int) {
        guard let bev else { return }
        _ = bufferevent_set_max_single_write(bev, bytes)
    }

    /// Read and write inactivity timeouts; 0 disables one. Each call starts the read timeout
    /// counting again, and a changed write timeout (an unchanged one goes on counting from the
    /// last write: a pending write's event restarts it whenever the socket takes bytes).
    public func setTimeouts(readMilliseconds: Int, writeMilliseconds: Int) {
        guard let bev else { return }
        readTimeoutMilliseconds = readMilliseconds
        readTimeoutChanged()
        guard writeMilliseconds != writeTimeoutMilliseconds else { return }
        writeTimeoutMilliseconds = writeMilliseconds
        var write = timeval(milliseconds: writeMilliseconds)
        _ = withUnsafePointer(to: &write) { bufferevent_set_timeouts(bev, nil, writeMilliseconds > 0 ? $0 : nil) }
    }

    /// Turns off Nagle's algorithm so small responses leave at once; it also pushes out what writes
    /// with `more` left held back (tcp(7)).
    public func setNoDelay() {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Sends FIN after the bytes already written (half-close).
    public func shutdownWrite() {
        sendHeld()
        guard let bev else { return }
        if evbuffer_get_length(bufferevent_get_output(bev)) == 0 {
            shutdown(bufferevent_getfd(bev), Int32(SHUT_WR))
        } else {
            pendingShutdown = true
        }
    }
    private var pendingShutdown = false

    // MARK: - Closing

    /// Closes at once; unwritten output is dropped (held writes count as written: sent first).
    public func close() {
        sendHeld()
        lingerTimer?.cancel()
        lingerTimer = nil
        guard let bev else { return }
        self.bev = nil
        if let readEvent {
            self.readEvent = nil
            readArmed = false
            event_free(readEvent)
        }
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
        sendHeld()
        flushThenClose = true
        lingerTimer = Timer(loop: loop) { [unowned self] in self.close() }
        lingerTimer?.schedule(milliseconds: lingerMilliseconds)
        setWatermarks(readHigh: 0, writeLow: 0)
        if outputCount == 0 { finishFlushedClose() }
    }

    private func finishFlushedClose() {
        guard let bev else { return }
        shutdown(bufferevent_getfd(bev), Int32(SHUT_WR))
        readWanted = true
        updateReading()
    }

    // MARK: - Callbacks

    func didRead() {
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
        let event: Event
        if what & Int16(BEV_EVENT_CONNECTED) != 0 {
            if peer == nil { peer = remoteAddress }
            installReading()
            event = .connected
        } else if what & Int16(BEV_EVENT_TIMEOUT) != 0 {
            event = .timeout(reading: what & Int16(BEV_EVENT_READING) != 0)
        } else if what & Int16(BEV_EVENT_EOF) != 0 {
            event = .endOfStream
        } else {
            let dnsError = bev.map { bufferevent_socket_get_dns_error($0) } ?? 0
            event = .error(code: dnsError != 0 ? dnsError : errno, resolving: dnsError != 0)
        }
        report(event)
    }

    /// Hands an event to the delegate, or ends a flushing close on the end, an error or a timeout.
    func report(_ event: Event) {
        if flushThenClose {
            if event != .connected { close() }
            return
        }
        delegate?.connection(self, didReceive: event)
    }
}
