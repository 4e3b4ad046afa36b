import CEvent

#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 or IPv6 socket address (`sockaddr_storage`), parsed and printed the usual way.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The raw address bytes: 4 for IPv4, 16 for IPv6.
    public let ip: [UInt8]
    /// The port, host order.
    public let port: UInt16

    /// Parses `"127.0.0.1:8080"`, `"[::1]:8080"` or, with `defaultPort`, a bare address.
    public init?(_ text: String, defaultPort: UInt16? = nil) {
        if let ip = SocketAddress.parseIP(text) {
            guard let defaultPort else { return nil }
            self.init(ip: ip, port: defaultPort)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") {
            guard host.hasSuffix("]") else { return nil }
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            return nil
        }
        guard let ip = SocketAddress.parseIP(host) else { return nil }
        self.init(ip: ip, port: port)
    }

    /// An address from its parts.
    public init(ip: [UInt8], port: UInt16) {
        self.ip = ip
        self.port = port
    }

    /// Converts a C `sockaddr_storage` (IPv4 or IPv6 only).
    init?(storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let sin = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            ip = withUnsafeBytes(of: sin.sin_addr) { Array($0) }
            port = UInt16(bigEndian: sin.sin_port)
        case AF_INET6:
            let sin6 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            ip = withUnsafeBytes(of: sin6.sin6_addr) { Array($0) }
            port = UInt16(bigEndian: sin6.sin6_port)
        default:
            return nil
        }
    }

    /// Converts a C `sockaddr` pointer of the given length.
    init?(pointer: UnsafePointer<sockaddr>, length: Int) {
        self.init(cAddress: UnsafeRawPointer(pointer), length: length)
    }

    /// Reads a C `sockaddr` (IPv4 or IPv6) of `length` bytes at `cAddress`.
    public init?(cAddress: UnsafeRawPointer, length: Int) {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { destination in
            destination.copyMemory(
                from: UnsafeRawBufferPointer(start: cAddress, count: min(length, destination.count)))
        }
        self.init(storage: storage)
    }

    /// Parses a bare IPv4 or IPv6 address (no port, no brackets).
    public static func parseIP(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if text.withCString({ inet_pton(AF_INET, $0, &v4) }) == 1 { return withUnsafeBytes(of: v4) { Array($0) } }
        var v6 = in6_addr()
        let bare = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        if bare.withCString({ inet_pton(AF_INET6, $0, &v6) }) == 1 { return withUnsafeBytes(of: v6) { Array($0) } }
        return nil
    }

    /// Whether this is IPv6.
    public var isIPv6: Bool { ip.count == 16 }

    /// The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`), else itself.
    public var unmapped: SocketAddress {
        if ip.count == 16, ip[0..<10].allSatisfy({ $0 == 0 }), ip[10] == 0xff, ip[11] == 0xff {
            return SocketAddress(ip: Array(ip[12..<16]), port: port)
        }
        return self
    }

    /// 127.0.0.0/8 or ::1 (or their mapped forms).
    public var isLoopback: Bool {
        let plain = unmapped
        if plain.ip.count == 4 { return plain.ip[0] == 127 }
        return plain.ip == [UInt8](repeating: 0, count: 15) + [1]
    }

    /// 0.0.0.0 or ::.
    public var isUnspecified: Bool { unmapped.ip.allSatisfy { $0 == 0 } }

    /// A private, shared or link-local network (RFC 1918 10/8, 172.16/12, 192.168/16; RFC 6598
    /// 100.64/10; 169.254/16; RFC 4193 fc00::/7; fe80::/10), or loopback: not reachable from the
    /// internet as it is.
    public var isLocalNetwork: Bool {
        let plain = unmapped
        if isLoopback { return true }
        let ip = plain.ip
        if ip.count == 4 {
            return ip[0] == 10 || (ip[0] == 172 && ip[1] & 0xF0 == 16) || (ip[0] == 192 && ip[1] == 168)
                || (ip[0] == 100 && ip[1] & 0xC0 == 64) || (ip[0] == 169 && ip[1] == 254)
        }
        return ip[0] & 0xFE == 0xFC || (ip[0] == 0xFE && ip[1] & 0xC0 == 0x80)
    }

    /// The address without its port, as text.
    public var host: String {
        var buffer = [CChar](repeating: 0, count: 64)
        var copy = ip
        let family = ip.count == 4 ? AF_INET : AF_INET6
        guard inet_ntop(family, &copy, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Calls `body` with this address as a C `sockaddr`.
    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, Int32) -> R) -> R {
        if ip.count == 4 {
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &sin.sin_addr) { $0.copyBytes(from: ip) }
            return withUnsafePointer(to: &sin) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, Int32(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        var sin6 = sockaddr_in6()
        sin6.sin6_family = sa_family_t(AF_INET6)
        sin6.sin6_port = port.bigEndian
        withUnsafeMutableBytes(of: &sin6.sin6_addr) { $0.copyBytes(from: ip) }
        return withUnsafePointer(to: &sin6) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, Int32(MemoryLayout<sockaddr_in6>.size)) }
        }
    }

    /// The local address a socket is bound to.
    static func local(of fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return result == 0 ? SocketAddress(storage: storage) : nil
    }

    /// The remote address a socket is connected to.
    static func peer(of fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        return result == 0 ? SocketAddress(storage: storage) : nil
    }
}
