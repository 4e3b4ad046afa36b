import CEvent

#if canImport(Glibc)
    import Glibc
#endif

/// This machine's network interfaces, as `getifaddrs(3)` lists them.
public enum NetworkInterfaces {
    /// Each IPv4 address with the name of its interface (`eth0`, `docker0`), in the kernel's order.
    public static func ipv4() -> [(interface: String, address: String)] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var found: [(interface: String, address: String)] = []
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
            found.append((current.pointee.ifa_name.map { String(cString: $0) } ?? "", host))
        }
        return found
    }
}
