import EventIO
import TLS

#if canImport(Glibc)
    import Glibc
#endif

/// Opens a byte stream to `host:port` for a CONNECT tunnel or an upgraded exchange (WebSocket):
/// a TCP connection to the origin, or through the parent proxy the configuration names (its
/// CONNECT, or SOCKS5), over TLS when the parent is `https://`. Until it says `opened` or
/// `failed`, it is the socket's delegate and keeps the connect timer (`timeouts.upstream_connect`).
final class Dialer {
    /// Where it stands; each case carries the connections it has.
    enum Phase {
        case idle
        /// Connecting to the origin, or to the parent.
        case connecting(Connection)
        /// Agreeing TLS with an `https://` parent.
        case securing(Connection, TLSStream)
        /// Asking the parent to open the tunnel (over TLS to an `https://` parent).
        case asking(Connection, TLSStream?, ParentHandshake)
        /// Handed over, or given up.
        case done
    }

    /// A stream to the origin: the socket, and TLS to an `https://` parent over it when there is one.
    struct Dialed {
        let upstream: Connection
        let parentTLS: TLSStream?
        /// The origin's byte stream: the socket, or the plain text of TLS to the parent.
        var far: any ClientStream { parentTLS ?? upstream }
    }

    /// What happened, told once.
    enum Outcome {
        case opened(Dialed)
        case failed(SluiceError)
    }

    private(set) var phase = Phase.idle
    private let env: TunnelEnvironment
    let host: String
    let port: UInt16
    /// The parent proxy on the way (`upstream.proxy`, a host rule's `proxy:`), if any.
    let parent: ParentProxy?
    /// Whether the client is on this machine (the target guard's exception for loopback).
    private let localClient: Bool
    private var connectTimer: Timer?
    private let done: (Outcome) -> Void

    /// The host without an IPv6 literal's brackets.
    var bareHost: String { host.withoutIPv6Brackets }

    init(
        environment: TunnelEnvironment, host: String, port: UInt16, parent: ParentProxy?, localClient: Bool,
        done: @escaping (Outcome) -> Void
    ) {
        env = environment
        self.host = host
        self.port = port
        self.parent = parent
        self.localClient = localClient
        self.done = done
    }

    /// The socket to the origin or the parent, once there is one.
    var connection: Connection? {
        switch phase {
        case .connecting(let upstream), .securing(let upstream, _), .asking(let upstream, _, _): return upstream
        case .idle, .done: return nil
        }
    }

    func start() {
        let target = parent.map { ($0.host, $0.port) } ?? (bareHost, port)
        let upstream = Connection(loop: env.loop, connectingTo: target.0, port: target.1, resolver: env.resolver)
        upstream.delegate = self
        phase = .connecting(upstream)
        let connectTimer = Timer(loop: env.loop) { [weak self] in
            guard let self, self.connection != nil else { return }
            self.fail(.upstreamFailed(reason: .timedOut(detail: "Connecting to \(self.host):\(self.port) timed out.")))
        }
        connectTimer.schedule(milliseconds: env.connectLimit)
        self.connectTimer = connectTimer
    }

    /// Gives up (the client went away): the socket closes, nothing is told.
    func cancel() {
        connectTimer?.cancel()
        connection?.close()
        phase = .done
    }

    private func fail(_ error: SluiceError) {
        cancel()
        done(.failed(error))
    }

    private func open(_ dialed: Dialed) {
        connectTimer?.cancel()
        phase = .done
        dialed.upstream.delegate = nil
        done(.opened(dialed))
    }

    private func parentFailed(_ detail: String) {
        fail(.upstreamFailed(reason: .parentFailed(parent: parent?.description ?? "", detail: detail)))
    }

    private func didConnect() {
        guard case .connecting(let upstream) = phase else { return }
        guard let parent else {
            if let address = upstream.remoteAddress,
                let refusal = env.targetGuard.refusal(address, localClient: localClient)
            {
                return fail(.forbidden(reason: refusal))
            }
            return open(Dialed(upstream: upstream, parentTLS: nil))
        }
        // Connected to the parent (which the configuration named): TLS first if it is https://.
        guard parent.scheme == .https else { return ask(parent, upstream, over: nil) }
        guard let context = env.parentTLS else { return parentFailed("no TLS context for https:// parents") }
        do {
            let tls = TLSStream(raw: upstream, session: try context.makeSession(host: parent.host))
            phase = .securing(upstream, tls)
            secure()
        } catch {
            parentFailed("TLS could not start: \(error)")
        }
    }

    /// Advances TLS with an `https://` parent; once agreed, asks it for the tunnel.
    private func secure() {
        guard case .securing(let upstream, let tls) = phase, let parent else { return }
        switch tls.advance() {
        case .handshaking:
            return
        case .established, .open:
            env.stats.parentTLSHandshakes += 1
            if tls.session.resumed { env.stats.parentTLSResumed += 1 }
            ask(parent, upstream, over: tls)
        case .failed(.certificateUntrusted(let reason)):
            parentFailed("its TLS certificate is not trusted (\(reason)); see upstream.proxy_ca_file")
        case .failed(.protocolError(let reason)), .failed(.certificateRejected(let reason)),
            .failed(.noCertificate(let reason)):
            parentFailed("TLS with it failed (\(reason))")
        }
    }

    /// Sends the parent the CONNECT (or the SOCKS5 greeting).
    private func ask(_ parent: ParentProxy, _ upstream: Connection, over tls: TLSStream?) {
        let handshake = ParentHandshake(parent: parent, host: bareHost, port: port)
        phase = .asking(upstream, tls, handshake)
        let far: any ClientStream = tls ?? upstream
        far.write(handshake.opening)
        if far.inputCount > 0 { parentAnswered() }
    }

    /// The parent's answers until the tunnel through it is open (or refused).
    private func parentAnswered() {
        while case .asking(let upstream, let tls, var handshake) = phase {
            let far: any ClientStream = tls ?? upstream
            let step = far.withInput(upTo: ParentHandshake.headLimit) { handshake.receive($0) }
            phase = .asking(upstream, tls, handshake)
            switch step {
            case .needMore:
                return
            case .reply(let bytes, let consumed):
                far.drainInput(consumed)
                far.write(bytes)
            case .established(let consumed):
                far.drainInput(consumed)
                return open(Dialed(upstream: upstream, parentTLS: tls))
            case .failed(let error):
                return fail(error)
            }
        }
    }
}

extension Dialer: ConnectionDelegate {
    func connectionDidRead(_ connection: Connection) {
        switch phase {
        case .securing: secure()
        case .asking: parentAnswered()
        case .idle, .connecting, .done: return
        }
    }

    func connectionDidDrain(_ connection: Connection) {}

    /// A socket error as people read it (`Connection refused`); a code of 0 says nothing more.
    static func reason(_ code: Int32) -> String { code == 0 ? "error 0" : String(cString: strerror(code)) }

    func connection(_ connection: Connection, didReceive event: Connection.Event) {
        switch (event, phase) {
        case (.connected, _):
            didConnect()
        case (.endOfStream, .securing), (.endOfStream, .asking):
            parentFailed("it closed the connection before the tunnel opened")
        case (.error(let code, _), .securing), (.error(let code, _), .asking):
            parentFailed("the connection to it failed before the tunnel opened (\(Dialer.reason(code)))")
        case (.error(let code, let resolving), .connecting):
            let detail = resolving ? DNSResolver.describe(code) : Dialer.reason(code)
            if parent != nil { return parentFailed("could not connect to it (\(detail))") }
            fail(
                resolving
                    ? .upstreamFailed(reason: .resolveFailed(host: host))
                    : .upstreamFailed(reason: .connectFailed(host: "\(host):\(port)", detail: detail)))
        case (.endOfStream, _), (.error, _), (.timeout, _):
            fail(.upstreamFailed(reason: .connectFailed(host: "\(host):\(port)", detail: "the connection closed")))
        }
    }
}
