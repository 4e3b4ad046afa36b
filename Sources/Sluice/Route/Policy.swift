import EventIO

/// Per-request decisions that need no origin: who may use the proxy and where it may go.
/// A class: every request consults it, and a struct holding the whole configuration would be
/// copied (every array and string retained) at each `server.policy` access.
final class Policy {
    let configuration: Configuration
    /// Where the proxy may connect: the configuration's target rules and this proxy's own
    /// listening addresses (the session checks connections with the same guard).
    private(set) var targets: TargetGuard

    /// `proxy_auth`'s credentials, when set: every request must carry them.
    let credentials: ProxyCredentials?

    init(configuration: Configuration, credentials: ProxyCredentials? = nil) {
        self.configuration = configuration
        self.credentials = credentials
        targets = TargetGuard(configuration)
    }

    /// Whether a device at `address` gets the onboarding page (asked of the proxy's own address)
    /// without credentials: always when `allow_clients` lists who may come; with the password as
    /// the only control, only from a local network (the page names the proxy's addresses).
    func servesOnboardingFreely(to address: SocketAddress?) -> Bool {
        guard credentials != nil, configuration.allowClients.isEmpty else { return true }
        return address?.isLocalNetwork ?? false
    }

    /// Whether a request with this `Proxy-Authorization` (or none) may use the proxy.
    func authorizes(_ header: String?) -> Bool { credentials?.accepts(header) ?? true }

    /// Marks one of this proxy's listening addresses: forwarding to it would loop. The admin
    /// API's is reached through the proxy by clients on this machine only.
    func addSelfAddress(_ address: SocketAddress, admin: Bool = false) {
        if admin {
            targets.adminAddresses.insert(address)
        } else {
            targets.selfAddresses.insert(address)
        }
        lastAllowed = nil
    }

    /// The last absolute-form target found allowed: a client's requests mostly go to one origin,
    /// and the answer (the host read as an address, the self and target-rule checks, about 1 800
    /// instructions) depends only on the host, the port and where the client is.
    private var lastAllowed: (host: String, port: UInt16, localClient: Bool)?

    /// Whether a client at `address` may use the proxy: loopback always, others if listed, or
    /// any with `proxy_auth` and no list.
    func allowsClient(_ address: SocketAddress) -> Bool {
        let plain = address.unmapped
        if plain.isLoopback { return true }
        // `proxy_auth` alone serves any network (the password is the access control); with
        // `allow_clients` too, only the listed ones.
        if configuration.allowClients.isEmpty { return credentials != nil }
        return configuration.allowClients.contains { $0.contains(plain.ip) }
    }

    /// Why an absolute-form request to `url` must be refused, if it must.
    func refusal(for url: TargetURL, localClient: Bool) -> SluiceError? {
        if let last = lastAllowed, last.port == url.port, last.localClient == localClient, last.host == url.host {
            return nil
        }
        let target = Target(host: url.host, port: url.port)
        if isSelf(target, localClient: localClient) { return .forbidden(reason: .loopDetected(url.authority)) }
        let refusal = literalRefusal(target, localClient: localClient)
        if refusal == nil { lastAllowed = (url.host, url.port, localClient) }
        return refusal
    }

    /// Why a CONNECT to `host:port` must be refused, if it must.
    func connectRefusal(host: String, port: UInt16, localClient: Bool) -> SluiceError? {
        let target = Target(host: host, port: port)
        // (The admin API answers plain requests through the proxy, never a tunnel.)
        if isSelf(target, localClient: false) { return .forbidden(reason: .loopDetected("\(host):\(port)")) }
        guard configuration.connectPorts.contains(port) || listedForInterception(target) else {
            return .forbidden(reason: .connectPortNotAllowed(port))
        }
        return literalRefusal(target, localClient: localClient)
    }

    /// A `tls.intercept` entry names this host with this very port (`localhost:18443`): listing it
    /// is asking for it, whatever `connect_ports` says.
    private func listedForInterception(_ target: Target) -> Bool {
        configuration.tls.intercept.contains { $0.port == target.port && $0.host.matches(target.bare) }
    }

    /// A quick syntactic check; the connection filter catches names that resolve to this proxy.
    func targetsSelf(host: String, port: UInt16) -> Bool {
        isSelf(Target(host: host, port: port), localClient: false)
    }

    /// A request's host, read once: without IPv6 brackets, and as an address when it is a literal.
    private struct Target {
        let bare: String
        let port: UInt16
        let address: SocketAddress?

        init(host: String, port: UInt16) {
            bare = host.withoutIPv6Brackets
            self.port = port
            address = SocketAddress.parseIP(bare).map { SocketAddress(ip: $0, port: port) }
        }
    }

    /// This proxy's own address, or `localhost` (or a name under it) on one of its loopback ports.
    private func isSelf(_ target: Target, localClient: Bool) -> Bool {
        if let address = target.address { return targets.isSelf(address, localClient: localClient) }
        guard target.bare == "localhost" || target.bare.hasSuffix(".localhost") else { return false }
        let owns = localClient ? targets.selfAddresses : targets.selfAddresses.union(targets.adminAddresses)
        return owns.contains { $0.port == target.port && ($0.isLoopback || $0.isUnspecified) }
    }

    /// The target guard's answer for a host written as an IP address, before any connection
    /// (names are checked on their resolved address when connecting).
    private func literalRefusal(_ target: Target, localClient: Bool) -> SluiceError? {
        guard let address = target.address else { return nil }
        return targets.refusal(address, localClient: localClient).map { .forbidden(reason: $0) }
    }
}
