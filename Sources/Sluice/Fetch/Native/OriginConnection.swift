import EventIO
import TLS

#if canImport(Glibc)
    import Glibc
#endif

/// One keep-alive connection to an origin for the native transport: resolved and connected by
/// itself (each address the name has, in turn, each checked by the target guard before a packet
/// goes to it), over TLS for `https://` origins (the rule's trust and pins, ALPN `http/1.1`,
/// sessions resumed per origin), then lent to one ``NativeTransfer`` at a time. While it waits
/// in the pool the loop still watches it: a close or stray bytes from the origin evict it, so
/// taking it again costs no system call. Loop-confined.
final class OriginConnection {
    /// Where it stands; each case carries what only it has.
    enum Phase {
        /// The origin's name is being resolved.
        case resolving
        /// A TCP connection is being made to the first of `next`; the rest are tried after it.
        case connecting(Connection, next: [SocketAddress])
        /// TLS is being agreed with the origin.
        case securing(Connection, TLSStream)
        /// Open: lent to a transfer, or idle in the pool.
        case open(Connection, TLSStream?)
        /// Closed (or never opened).
        case closed
    }

    /// What opening it came to, told once to the transfer that asked for it.
    enum Opening {
        case ready
        case failed(SluiceError)
        /// The origin speaks only HTTP/2 (its ALPN refused `http/1.1`): libcurl must carry it.
        case declined
    }

    /// The pool of its origin, which it goes back to.
    let pool: OriginPool
    var key: OriginKey { pool.key }
    private(set) var phase = Phase.resolving
    /// The transport whose pool it is in; it closes its idle connections as it goes, and one in
    /// use is let go of by its transfer first (held without reference counting, as
    /// ``NativeTransfer/transport``).
    unowned(unsafe) let transport: NativeTransport
    /// The transfer using it now (`nil` while idle or opening). Unowned, not weak (no side
    /// table for the transfer): cleared by ``release()`` and ``close()``, which every way a
    /// transfer lets go of its connection takes, and by the transfer's `deinit`.
    unowned var user: NativeTransfer?
    /// Requests it carried (0: new).
    private(set) var served = 0
    /// When it went idle (monotonic nanoseconds), for the pool's idle limit.
    var idleSince: UInt64 = 0
    /// The opening's phases, in seconds from its start (name, TCP, TLS).
    private(set) var opening = TransferTimings()
    private var openedAt: UInt64 = 0
    private var connectTimer: Timer?
    /// The current address's own deadline when more addresses are left to try.
    private var attemptTimer: Timer?
    /// Told once when opening ends.
    private var opened: ((Opening) -> Void)?
    /// The peer's address (the one the guard allowed).
    private(set) var address: SocketAddress?

    init(pool: OriginPool, transport: NativeTransport) {
        self.pool = pool
        self.transport = transport
        link.connection = self
    }

    /// What a callback that may come after it is gone (the resolver's) holds instead of it.
    final class Link {
        /// Cleared by its `deinit`.
        unowned var connection: OriginConnection?
    }
    private let link = Link()

    /// Its socket (held unowned by it) and its link no longer point back here.
    deinit {
        socket?.delegate = nil
        link.connection = nil
    }

    /// The byte stream to the origin: the socket, or TLS over it.
    var stream: (any ClientStream)? {
        guard case .open(let socket, let tls) = phase else { return nil }
        return tls ?? socket
    }

    /// The socket, in any phase that has one.
    var socket: Connection? {
        switch phase {
        case .connecting(let socket, _), .securing(let socket, _), .open(let socket, _): socket
        case .resolving, .closed: nil
        }
    }

    var isOpen: Bool {
        if case .open = phase { return true }
        return false
    }

    /// Open, and (over TLS) the origin has not ended its side with close_notify.
    var isReusable: Bool {
        guard case .open(_, let tls) = phase else { return false }
        return !(tls?.inputEnded ?? false)
    }

    /// The read timeout (`timeouts.upstream_idle`) on or off: off while a request body is sent
    /// (the origin may rightly say nothing until it has it all; the write timeout still holds).
    func readTimeout(_ enabled: Bool) {
        let idle = transport.settings.idleTimeoutMilliseconds
        socket?.setTimeouts(readMilliseconds: enabled ? idle : 0, writeMilliseconds: idle)
    }

    // MARK: - Opening

    /// Resolves, checks, connects and (for `https://`) agrees TLS; `guarded` is asked about each
    /// address before a packet goes to it. `done` hears the outcome once.
    func open(
        guarded: @escaping (SocketAddress) -> Bool, refused: @escaping () -> SluiceError,
        done: @escaping (Opening) -> Void
    ) {
        opened = done
        openedAt = EventLoop.monotonicNanoseconds()
        // Its timers are its own (freed with it, never fired after), so they hold it unowned:
        // a weak reference would give it a side table, and every later retain of it (several a
        // request, for as long as it is pooled) the slow path.
        let timer = Timer(loop: transport.loop) { [unowned self] in
            guard !self.isOpen else { return }
            self.failOpening(
                .upstreamFailed(
                    reason: .timedOut(
                        detail:
                            "Connecting to \(self.key.authority) took longer than \(self.transport.settings.connectTimeoutMilliseconds) ms."
                    )))
        }
        timer.schedule(milliseconds: transport.settings.connectTimeoutMilliseconds)
        connectTimer = timer
        let port = key.port
        // The resolver may answer after it is gone: it is reached through its link.
        transport.resolver.resolveAll(key.bareHost) { [link] result in
            guard let self = link.connection, case .resolving = self.phase else { return }
            self.opening.nameLookup = self.elapsed()
            switch result {
            case .failure:
                self.failOpening(.upstreamFailed(reason: .resolveFailed(host: self.key.host)))
            case .success(let found):
                let allowed = found.map { SocketAddress(ip: $0.ip, port: port) }.filter(guarded)
                guard !allowed.isEmpty else { return self.failOpening(refused()) }
                self.connect(allowed[0], next: Array(allowed.dropFirst()))
            }
        }
    }

    private func elapsed() -> Double { Double(EventLoop.monotonicNanoseconds() &- openedAt) / 1e9 }

    private func connect(_ address: SocketAddress, next: [SocketAddress]) {
        self.address = address
        let socket = Connection(loop: transport.loop, connectingTo: address)
        socket.setOwningDelegate(self)  // let go of in `close()`, `nextAddress()` and `deinit`
        phase = .connecting(socket, next: next)
        attemptTimer?.cancel()
        guard !next.isEmpty else { return }
        // Each address but the last gets half of what is left (at least 250 ms), as libcurl
        // does: one that drops packets does not use up the whole connect timeout.
        let left = transport.settings.connectTimeoutMilliseconds - Int(elapsed() * 1000)
        let timer = attemptTimer ?? Timer(loop: transport.loop) { [unowned self] in self.nextAddress() }
        attemptTimer = timer
        timer.schedule(milliseconds: max(250, left / 2))
    }

    /// The current address did not answer in its time (or refused): the next one.
    private func nextAddress() {
        guard case .connecting(let socket, let next) = phase, let address = next.first else { return }
        socket.delegate = nil
        socket.close()
        connect(address, next: Array(next.dropFirst()))
    }

    private func didConnect(_ socket: Connection) {
        attemptTimer?.cancel()
        opening.connect = elapsed()
        socket.setNoDelay()
        socket.setWatermarks(readHigh: NativeTransfer.readHighWater, writeLow: NativeTransfer.writeLowWater)
        // Set once: a stalled transfer times out (`timeouts.upstream_idle`), and so does an idle
        // connection in the pool, which is then evicted.
        let idle = transport.settings.idleTimeoutMilliseconds
        socket.setTimeouts(readMilliseconds: idle, writeMilliseconds: idle)
        guard key.scheme == "https" else { return becomeOpen(socket, nil) }
        do {
            let context = try transport.tls.context(for: key.trust)
            let tls = TLSStream(raw: socket, session: try context.makeSession(host: key.bareHost))
            phase = .securing(socket, tls)
            secure()
        } catch {
            failOpening(.upstreamFailed(reason: .tlsFailed(detail: "\(error)")))
        }
    }

    private func secure() {
        guard case .securing(let socket, let tls) = phase else { return }
        switch tls.advance() {
        case .handshaking:
            return
        case .established, .open:
            opening.tls = elapsed()
            if let pins = key.trust?.pins, !pins.isEmpty, !pins.contains(tls.session.peerKeyPin ?? "") {
                return failOpening(.upstreamFailed(reason: .pinMismatch(host: key.host)))
            }
            becomeOpen(socket, tls)
        case .failed(.certificateUntrusted(let reason)):
            failOpening(
                .upstreamFailed(
                    reason: .certificateInvalid(host: key.host, detail: UpstreamTask.certificateReason(reason))))
        case .failed(.protocolError(let reason)) where reason.contains("no application protocol"):
            transport.speaksOnlyHTTP2(key)
            endOpening(.declined)
        case .failed(.protocolError(let reason)), .failed(.certificateRejected(let reason)),
            .failed(.noCertificate(let reason)):
            // An origin that wants a client certificate and got none ends the handshake with an
            // alert (TLS 1.2); said with what to do.
            let wantsCertificate =
                key.trust?.clientCertificate == nil
                && (reason.contains("certificate required") || reason.contains("alert handshake failure"))
            let hint = wantsCertificate ? UpstreamTrust.clientCertificateHint : ""
            failOpening(.upstreamFailed(reason: .tlsFailed(detail: reason + hint)))
        }
    }

    private func becomeOpen(_ socket: Connection, _ tls: TLSStream?) {
        phase = .open(socket, tls)
        endOpening(.ready)
    }

    private func failOpening(_ error: SluiceError) { endOpening(.failed(error)) }

    private func endOpening(_ outcome: Opening) {
        connectTimer?.cancel()
        connectTimer = nil
        attemptTimer?.cancel()
        attemptTimer = nil
        let done = opened
        opened = nil
        if case .ready = outcome {} else { close() }
        done?(outcome)
    }

    // MARK: - Lending

    /// Lends it to `transfer` (its events go there until ``release()``).
    func lend(to transfer: NativeTransfer) {
        user = transfer
        served += 1
    }

    /// Back from its transfer: idle now, watched for the origin's close.
    func release() {
        user = nil
        idleSince = EventLoop.monotonicNanoseconds()
        // Reading may have paused for a slow client when the body's last piece was held: an
        // idle connection is read (its close or stray bytes evict it), and the next transfer
        // on it reads its answer.
        if case .open(let socket, _) = phase, socket.isReadingPaused { socket.resumeReading() }
    }

    /// Closes the socket (after close_notify on TLS); no event follows.
    func close() {
        connectTimer?.cancel()
        connectTimer = nil
        attemptTimer?.cancel()
        attemptTimer = nil
        opened = nil  // its closure holds this connection
        switch phase {
        case .open(let socket, let tls):
            tls?.close()
            socket.delegate = nil
            socket.close()
        case .connecting(let socket, _), .securing(let socket, _):
            socket.delegate = nil
            socket.close()
        case .resolving, .closed:
            break
        }
        phase = .closed
        user = nil
    }
}

extension OriginConnection: ConnectionDelegate {
    func connectionDidRead(_ connection: Connection) {
        switch phase {
        case .securing: secure()
        case .open(_, let tls):
            // TLS: what arrived is decrypted now (the stream refills only when its plain text is
            // used up, and a head may end in a record still to come).
            _ = tls?.advance()
            if let user { return user.readable() }
            // TLS records that carry no data (a session ticket, a key update) keep it; stray
            // bytes or a close_notify from an idle origin mean it cannot be reused.
            if let tls, tls.inputCount == 0, !tls.inputEnded { return }
            transport.evict(self)
        case .resolving, .connecting, .closed: return
        }
    }

    func connectionDidDrain(_ connection: Connection) { user?.writable() }

    func connection(_ connection: Connection, didReceive event: Connection.Event) {
        switch (event, phase) {
        case (.connected, .connecting(let socket, _)):
            didConnect(socket)
        case (.error, .connecting(_, let next)), (.endOfStream, .connecting(_, let next)):
            if !next.isEmpty { return nextAddress() }
            connection.delegate = nil
            connection.close()
            let detail = event == .endOfStream ? "the connection closed" : String(cString: strerror(codeOf(event)))
            failOpening(.upstreamFailed(reason: .connectFailed(host: key.authority, detail: detail)))
        case (_, .securing):
            failOpening(
                .upstreamFailed(reason: .tlsFailed(detail: "the origin closed the connection during the handshake")))
        case (_, .open):
            if let user { return user.ended(event) }
            transport.evict(self)  // the origin closed an idle connection
        case (_, .resolving), (_, .closed), (.connected, _), (.timeout, .connecting):
            return
        }
    }

    private func codeOf(_ event: Connection.Event) -> Int32 {
        if case .error(let code, _) = event { return code }
        return 0
    }
}

/// Which pooled connections may carry a request: same scheme, host, port and way of trusting.
struct OriginKey: Hashable {
    let scheme: String
    /// The host as in the URL (IPv6 literals keep their brackets).
    let host: String
    let port: UInt16
    /// The rule's `tls:` (`nil`: the system store, verified); plain HTTP ignores it.
    let trust: UpstreamTrust?

    init(_ request: UpstreamRequest) {
        scheme = request.url.scheme
        host = request.url.host
        port = request.url.port
        trust = request.url.scheme == "https" ? request.trust : nil
    }

    var bareHost: String { host.withoutIPv6Brackets }

    /// The host and port only (a pool lookup a request): keys that differ in scheme or trust
    /// alone share a bucket and are told apart by `==`.
    func hash(into hasher: inout Hasher) {
        hasher.combine(host)
        hasher.combine(port)
    }
    var authority: String { "\(host):\(port)" }
}
