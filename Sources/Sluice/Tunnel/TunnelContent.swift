/// What a client sends first inside a CONNECT tunnel, read from at most ``limit`` bytes: a TLS
/// handshake record, the start of an HTTP/1.x request for the tunnel's own origin (a method
/// token, one space, then an origin-form or `*` target), or anything else. Browsers tunnel
/// `ws://` to port 80 and WebSocket libraries every `ws://`: those are plain HTTP, which Sluice
/// then serves itself. An absolute-form target (a client speaking to another proxy through the
/// tunnel) and HTTP/2's preface (`PRI * HTTP/2.0`, prior knowledge) are relayed as they are.
enum TunnelContent: Equatable {
    /// A TLS record of type handshake (a ClientHello).
    case tls
    /// An HTTP/1.x request line for the tunnel's origin begins.
    case http
    /// Another protocol: relayed as it is.
    case other
    /// What came so far could still be either.
    case needMore

    /// The most bytes looked at: a long method, a space and the target's first byte.
    static let limit = 32
    /// The longest method read as HTTP (the registered ones are at most 17 bytes).
    static let longestMethod = 20

    static func classify(_ bytes: some Collection<UInt8>) -> TunnelContent {
        guard let first = bytes.first else { return .needMore }
        if first == 0x16 { return .tls }
        var index = bytes.startIndex
        var method: [UInt8] = []
        while index != bytes.endIndex, isMethodByte(bytes[index]) {
            method.append(bytes[index])
            if method.count > longestMethod { return .other }
            index = bytes.index(after: index)
        }
        guard index != bytes.endIndex else { return .needMore }
        guard !method.isEmpty, bytes[index] == UInt8(ascii: " ") else { return .other }
        // HTTP/2's connection preface: a client with prior knowledge, not an HTTP/1.x request.
        if method == Array("PRI".utf8) { return .other }
        let target = bytes[bytes.index(after: index)...]
        guard let start = target.first else { return .needMore }
        return start == UInt8(ascii: "/") || start == UInt8(ascii: "*") ? .http : .other
    }

    /// Methods are tokens; in practice upper-case letters (`M-SEARCH` and the like have a `-`).
    private static func isMethodByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "_")
    }
}
