import EventIO

/// Where other devices reach a listener: none on loopback; this machine's IPv4 addresses (not
/// loopback, not link-local) when it listens on all of them; else its own address.
enum LANAddresses {
    /// Those inside `allowClients`' networks first (a device there reaches its own network's
    /// address; the QR code holds the first).
    static func reaching(_ bound: SocketAddress, allowClients: [CIDR] = []) -> [String] {
        if bound.isLoopback { return [] }
        guard bound.isUnspecified else { return [bound.description] }
        let all = interfaceIPv4()
        let inside = all.filter { address in
            SocketAddress.parseIP(address).map { ip in allowClients.contains { $0.contains(ip) } } ?? false
        }
        return (inside + all.filter { !inside.contains($0) }).map { "\($0):\(bound.port)" }
    }

    /// The machine's IPv4 addresses other than loopback and link-local, in interface order;
    /// those of container and VM bridges (docker0, br-…, virbr…, veth…, cni…) last, since a
    /// phone on the LAN does not reach them.
    static func interfaceIPv4() -> [String] {
        var found: [(address: String, bridge: Bool)] = []
        for (interface, address) in NetworkInterfaces.ipv4() {
            guard !address.hasPrefix("127."), !address.hasPrefix("169.254."),
                !found.contains(where: { $0.address == address })
            else { continue }
            found.append((address, isBridge(interface)))
        }
        return found.filter { !$0.bridge }.map(\.address) + found.filter(\.bridge).map(\.address)
    }

    /// Interfaces of container and VM networks, by their usual names.
    static func isBridge(_ name: String) -> Bool {
        ["docker", "br-", "virbr", "veth", "cni", "flannel", "podman", "lxc", "vmnet", "vboxnet"].contains {
            name.hasPrefix($0)
        }
    }
}
