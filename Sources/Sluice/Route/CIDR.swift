import EventIO

/// An IPv4 or IPv6 network (`10.0.0.0/8`, `fd00::/8`).
public struct CIDR: Sendable, Equatable, CustomStringConvertible {
    /// The network address bytes (4 or 16).
    public let network: [UInt8]
    /// The prefix length.
    public let prefixLength: Int

    /// Parses `address/prefix` or a bare address (a host route).
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = SocketAddress.parseIP(String(parts[0])) else { return nil }
        let bits = address.count * 8
        var prefix = bits
        if parts.count == 2 {
            guard let value = Int(parts[1]), (0...bits).contains(value) else { return nil }
            prefix = value
        }
        network = CIDR.mask(address, prefix)
        prefixLength = prefix
    }

    /// Whether `ip` (4 or 16 bytes) is inside this network.
    public func contains(_ ip: [UInt8]) -> Bool {
        guard ip.count == network.count else { return false }
        // Whole bytes first, then the partial one; no allocation (this runs for every connection).
        let whole = prefixLength >> 3
        for index in 0..<whole where ip[index] != network[index] { return false }
        let rest = prefixLength & 7
        guard rest > 0 else { return true }
        let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - rest))
        return ip[whole] & mask == network[whole]
    }

    private static func mask(_ ip: [UInt8], _ prefix: Int) -> [UInt8] {
        ip.enumerated().map { index, byte in
            let keep = max(0, min(8, prefix - index * 8))
            return keep == 8 ? byte : byte & UInt8(truncatingIfNeeded: 0xFF << (8 - keep))
        }
    }

    public var description: String {
        let text =
            network.count == 4
            ? network.map(String.init).joined(separator: ".")
            : stride(from: 0, to: 16, by: 2).map {
                String(UInt16(network[$0]) << 8 | UInt16(network[$0 + 1]), radix: 16)
            }
            .joined(separator: ":")
        return "\(text)/\(prefixLength)"
    }
}
