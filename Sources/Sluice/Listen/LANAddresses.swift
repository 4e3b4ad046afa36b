import EventIO

#if canImport(Glibc)
    import Glibc
#endif

/// Where other devices reach a listener: none on loopback; this machine's IPv4 addresses (not
/// loopback, not link-local) when it listens on all of them; else its own address.
enum LANAddresses {
    static func reaching(_ bound: SocketAddress) -> [String] {
        if bound.isLoopback { return [] }
        guard bound.isUnspecified else { return [bound.description] }
        return interfaceIPv4().map { "\($0):\(bound.port)" }
    }

    /// The machine's IPv4 addresses other than loopback and link-local, in interface order;
    /// those of container and VM bridges (docker0, br-…, virbr…, veth…, cni…) last, since a
    /// phone on the LAN does not reach them.
    static func interfaceIPv4() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var found: [(address: String, bridge: Bool)] = []
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else {
                continue
            }
            var ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            inet_ntop(AF_INET, &ipv4, &text, socklen_t(text.count))
            let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let name = current.pointee.ifa_name.map { String(cString: $0) } ?? ""
            guard !host.hasPrefix("127."), !host.hasPrefix("169.254."), !found.contains(where: { $0.address == host })
            else { continue }
            found.append((host, isBridge(name)))
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
