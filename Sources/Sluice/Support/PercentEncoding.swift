/// `%XX` escapes (RFC 3986 §2.1), decoded byte by byte; malformed escapes are kept as written.
enum PercentEncoding {
    /// `plusAsSpace`: a form-encoded query (`+` is a space); elsewhere `+` is itself.
    static func decode(_ text: some StringProtocol, plusAsSpace: Bool) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if plusAsSpace, byte == 0x2B {
                bytes.append(0x20)
            } else if byte == 0x25, utf8.count >= 2,
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
