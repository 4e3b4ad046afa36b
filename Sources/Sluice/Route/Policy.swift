import EventIO

/// Per-request decisions that need no origin: who may use the proxy and where it may go.
/// A class: every request consults it, and a struct holding the whole configuration would be
/// copied (every array and string retained) at each `server.policy` access.
final class Policy {
    let configuration: Configuration
    /// Where the proxy may connect: the configuration's target rules and this proxy's own
    /// listening addresses (the session checks connections with the same guard).
    private(set) var targets: TargetGuard

    init(configuration: Configuration) {
        self.configuration = configuration
        targets = TargetGuard(configuration)
    }

    /// Marks one of this proxy's listening addresses: forwarding to it would loop.
    func addSelfAddress(_ address: SocketAddress) { targets.selfAddresses.insert(address) }

    /// Whether a client at `address` may use the proxy: loopback always, others only if listed.
    func allowsClient(_ address: SocketAddress) -> Bool {
        let plain = address.unmapped
        if plain.isLoopback { return true }
        return configuration.allowClients.contains { $0.contains(plain.ip) }
    }

    /// Why an absolute-form request to `url` must be refused, if it must.
    func refusal(for url: TargetURL, localClient: Bool) -> SluiceError? {
        let host = url.host
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        // An address literal is parsed once, for both checks.
        guard let ip = SocketAddress.parseIP(bare) else {
            return selfByName(bare, port: url.port) ? .forbidden(reason: .loopDetected(url.authority)) : nil
        }
        let address = SocketAddress(ip: ip, port: url.port)
        if targets.isSelf(address) { return .forbidden(reason: .loopDetected(url.authority)) }
        return targets.refusal(address, localClient: localClient).map { .forbidden(reason: $0) }
    }

    /// Why a CONNECT to `host:port` must be refused, if it must.
    func connectRefusal(host: String, port: UInt16, localClient: Bool) -> SluiceError? {
        if targetsSelf(host: host, port: port) { return .forbidden(reason: .loopDetected("\(host):\(port)")) }
        guard configuration.connectPorts.contains(port) else { return .forbidden(reason: .connectPortNotAllowed(port)) }
        return literalRefusal(host: host, port: port, localClient: localClient).map { .forbidden(reason: $0) }
    }

    /// The target guard's answer for a host written as an IP address, before any connection
    /// (names are checked on their resolved address when connecting).
    private func literalRefusal(host: String, port: UInt16, localClient: Bool) -> SluiceError.ForbiddenReason? {
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        guard let ip = SocketAddress.parseIP(bare) else { return nil }
        return targets.refusal(SocketAddress(ip: ip, port: port), localClient: localClient)
    }

    /// A quick syntactic check; the connection filter catches names that resolve to this proxy.
    func targetsSelf(host: String, port: UInt16) -> Bool {
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        if let ip = SocketAddress.parseIP(bare) { return targets.isSelf(SocketAddress(ip: ip, port: port)) }
        return selfByName(bare, port: port)
    }

    /// `localhost` (or a name under it) on one of this proxy's loopback ports.
    private func selfByName(_ bare: String, port: UInt16) -> Bool {
        guard bare == "localhost" || bare.hasSuffix(".localhost") else { return false }
        return targets.selfAddresses.contains { $0.port == port && ($0.isLoopback || $0.isUnspecified) }
    }
}
