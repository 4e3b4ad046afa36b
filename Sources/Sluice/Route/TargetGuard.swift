import EventIO

/// Where the proxy may connect, decided on the address it is about to connect to (after DNS, so
/// a name cannot smuggle a forbidden address past it): never itself (a loop), never a
/// `deny_targets` network, and loopback only for the clients `loopback_targets` allows.
public struct TargetGuard: Sendable {
    /// Addresses that are this proxy (its proxy ports).
    public var selfAddresses: Set<SocketAddress> = []
    /// The admin API's address: a client on this machine may reach it through the proxy (the page
    /// and the API from a terminal or a browser set to use the proxy), any other never.
    public var adminAddresses: Set<SocketAddress> = []
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
        // Unmapped once and its bytes looked at here: each of SocketAddress's own tests unmaps
        // (copies) it again, and this runs for every request, on a reused connection too.
        let plain = address.unmapped
        let local = Self.isLoopbackOrUnspecified(plain.ip)
        if isSelf(plain, local: local, localClient: localClient) { return .loopDetected(plain.description) }
        for network in deny where network.contains(plain.ip) {
            return .targetDenied(target: plain.host, rule: "deny_targets \(network)")
        }
        if local {
            switch loopback {
            case .all: break
            case .localClients where localClient: break
            case .localClients: return .targetDenied(target: plain.host, rule: "loopback_targets: local-clients")
            case .none: return .targetDenied(target: plain.host, rule: "loopback_targets: none")
            }
        }
        return nil
    }

    /// Whether `address` is one of this proxy's listening addresses (the admin API's too, for a
    /// client that is not on this machine).
    func isSelf(_ address: SocketAddress, localClient: Bool) -> Bool {
        let plain = address.unmapped
        return isSelf(plain, local: Self.isLoopbackOrUnspecified(plain.ip), localClient: localClient)
    }

    /// ``isSelf(_:localClient:)`` of an unmapped address, told whether it is loopback or unspecified.
    private func isSelf(_ plain: SocketAddress, local: Bool, localClient: Bool) -> Bool {
        isSelf(plain, local: local, among: selfAddresses)
            || (!localClient && isSelf(plain, local: local, among: adminAddresses))
    }

    /// Whether an unmapped address, told whether it is loopback or unspecified, is one of `owns`.
    private func isSelf(_ plain: SocketAddress, local: Bool, among owns: Set<SocketAddress>) -> Bool {
        for own in owns where own.port == plain.port {
            if own.unmapped.ip == plain.ip { return true }
            if local, own.isUnspecified || own.isLoopback { return true }
        }
        return false
    }

    /// 127.0.0.0/8, ::1, 0.0.0.0 or :: (as unmapped bytes).
    private static func isLoopbackOrUnspecified(_ ip: [UInt8]) -> Bool {
        if ip.count == 4 { return ip[0] == 127 || ip.allSatisfy { $0 == 0 } }
        return ip.count == 16 && ip[15] <= 1 && ip[0..<15].allSatisfy { $0 == 0 }
    }
}
