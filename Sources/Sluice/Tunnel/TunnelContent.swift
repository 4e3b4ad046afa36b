/// What a client sends first inside a CONNECT tunnel, read from at most ``limit`` bytes: a TLS
/// handshake record, the start of an HTTP/1.x request (a method token, one space, then an
/// origin-form, absolute-form or `*` target), or anything else. Browsers tunnel `ws://` to port 80
/// and WebSocket libraries every `ws://`: those are plain HTTP, which Sluice then serves itself.
enum TunnelContent: Equatable {
    /// A TLS record of type handshake (a ClientHello).
    case tls
    /// An HTTP/1.x request line begins.
    case http
    /// Another protocol: relayed as it is.
    case other
    /// What came so far could still be either.
    case needMore

    /// The most bytes looked at: a long method, a space and the start of `https://`.
    static let limit = 32
    /// The longest method read as HTTP (the registered ones are at most 17 bytes).
    static let longestMethod = 20

    static func classify(_ bytes: some Collection<UInt8>) -> TunnelContent {
        guard let first = bytes.first else { return .needMore }
        if first == 0x16 { return .tls }
        var index = bytes.startIndex
        var methodLength = 0
        while index != bytes.endIndex, isMethodByte(bytes[index]) {
            methodLength += 1
            if methodLength > longestMethod { return .other }
            index = bytes.index(after: index)
        }
        guard index != bytes.endIndex else { return .needMore }
        guard methodLength > 0, bytes[index] == UInt8(ascii: " ") else { return .other }
        let target = bytes[bytes.index(after: index)...]
        guard let start = target.first else { return .needMore }
        if start == UInt8(ascii: "/") || start == UInt8(ascii: "*") { return .http }
        // An absolute-form target: `http://` or `https://`, in any case.
        for scheme in ["http://", "https://"] {
            let expected = Array(scheme.utf8)
            let seen = target.prefix(expected.count).map { $0 | 0x20 }
            let lowered = expected.map { $0 | 0x20 }
            if seen.count < expected.count {
                if seen.elementsEqual(lowered.prefix(seen.count)) { return .needMore }
            } else if seen.elementsEqual(lowered) {
                return .http
            }
        }
        return .other
    }

    /// Methods are tokens; in practice upper-case letters (`M-SEARCH` and the like have a `-`).
    private static func isMethodByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "_")
    }
}
