/// `%XX` escapes (RFC 3986 §2.1), decoded byte by byte; malformed escapes are kept as written.
enum PercentEncoding {
    /// `plusAsSpace`: a form-encoded query (`+` is a space); elsewhere `+` is itself. `decodes`:
    /// which escaped bytes are decoded (the others stay escaped as written: a path compared with
    /// its unreserved escapes decoded keeps `%2F`, RFC 3986 §6.2.2.2).
    static func decode(
        _ text: some StringProtocol, plusAsSpace: Bool, decodes: (UInt8) -> Bool = { _ in true }
    ) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if plusAsSpace, byte == 0x2B {
                bytes.append(0x20)
            } else if byte == 0x25, utf8.count >= 2,
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16), decodes(value)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// RFC 3986 §2.3's unreserved characters: letters, digits, `-._~`.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x2D
            || byte == 0x2E || byte == 0x5F || byte == 0x7E
    }

    /// `text` with every UTF-8 byte that `keeps` refuses written `%XX` (upper-case hex);
    /// `spaceAsPlus`: a space as `+` (`application/x-www-form-urlencoded`).
    static func encoded(_ text: String, keeping keeps: (UInt8) -> Bool, spaceAsPlus: Bool = false) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if keeps(byte) {
                out.append(byte)
            } else if spaceAsPlus, byte == 0x20 {
                out.append(UInt8(ascii: "+"))
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
