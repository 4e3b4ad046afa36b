import EventIO

/// Where the proxy may connect, decided on the address it is about to connect to (after DNS, so
/// a name cannot smuggle a forbidden address past it): never itself (a loop), never a
/// `deny_targets` network, and loopback only for the clients `loopback_targets` allows.
public struct TargetGuard: Sendable {
    /// Addresses that are this proxy (its proxy and admin ports).
    public var selfAddresses: Set<SocketAddress> = []
    /// Networks never connected to.
    public var deny: [CIDR]
    /// Who may reach loopback addresses.
    public var loopback: Configuration.LoopbackTargets

    public init(
        deny: [CIDR] = Configuration.defaultDenyTargets, loopback: Configuration.LoopbackTargets = .localClients
    ) {
        self.deny = deny
        self.loopback = loopback
    }

    init(_ configuration: Configuration) {
        self.init(deny: configuration.denyTargets, loopback: configuration.loopbackTargets)
    }

    /// Why connecting to `address` for a client (on this machine if `localClient`) is refused, or `nil`.
    public func refusal(_ address: SocketAddress, localClient: Bool) -> SluiceError.ForbiddenReason? {
        let plain = address.unmapped
        if isSelf(plain) { return .loopDetected(plain.description) }
        if let network = deny.first(where: { $0.contains(plain.ip) }) {
            return .targetDenied(target: plain.host, rule: "deny_targets \(network)")
        }
        if plain.isLoopback || plain.isUnspecified {
            switch loopback {
            case .all: break
            case .localClients where localClient: break
            case .localClients: return .targetDenied(target: plain.host, rule: "loopback_targets: local-clients")
            case .none: return .targetDenied(target: plain.host, rule: "loopback_targets: none")
            }
        }
        return nil
    }

    /// Whether `address` is one of this proxy's listening addresses.
    func isSelf(_ address: SocketAddress) -> Bool {
        let plain = address.unmapped
        for own in selfAddresses where own.port == plain.port {
            if own.unmapped.ip == plain.ip { return true }
            if own.isUnspecified || own.isLoopback, plain.isLoopback || plain.isUnspecified { return true }
        }
        return false
    }
}
