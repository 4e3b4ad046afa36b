/// What an origin's response head must satisfy before a byte of it reaches a client or the cache
/// (RFC 9112 §6.1, §6.3; RFC 9110 §5.5). A head that frames its body ambiguously is the origin
/// half of request smuggling and response splitting: Sluice answers 502 instead of guessing.
enum ResponseFraming {
    /// Why `head` must not be relayed, or `nil`; identical repeated `Content-Length` fields are
    /// folded into one on the way (§6.3 allows a recipient to do that).
    static func violation(_ head: inout ResponseHead) -> String? {
        // The usual head: no Transfer-Encoding and at most one Content-Length of plain digits.
        if !head.headers.contains(.transferEncoding) {
            guard head.headers.contains(.contentLength) else { return nil }
            if let only = head.headers.onlyValue(.contentLength), Self.isDigits(only) { return nil }
        }
        let lengths = head.headers.values(.contentLength)
        let codings = head.headers.tokens(.transferEncoding)
        // RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding is to be read as faulty
        // framing (1.0 has no transfer codings; what follows its "end" may be another response).
        if head.headers.contains(.transferEncoding), head.version == "1.0" {
            return "The origin answered HTTP/1.0 with Transfer-Encoding: its framing cannot be trusted."
        }
        if !codings.isEmpty {
            if !lengths.isEmpty { return "The origin framed its body with both Transfer-Encoding and Content-Length." }
            if codings != ["chunked"] {
                return "The origin used a transfer coding Sluice does not decode: \(codings.joined(separator: ", "))."
            }
        }
        if lengths.count > 0 {
            var seen: Set<String> = []
            for field in lengths {
                for item in field.split(separator: ",", omittingEmptySubsequences: false) {
                    seen.insert(String(item).trimmingOWS())
                }
            }
            guard seen.count == 1, let only = seen.first, Self.isDigits(only) else {
                return "The origin sent an invalid or conflicting Content-Length (\(lengths.joined(separator: ", ")))."
            }
            if lengths.count > 1 || lengths[0] != only { head.headers.set("Content-Length", String(only)) }
        }
        return nil
    }

    /// Plain digits, at most 18 of them (a length beyond that is no body anyone sends, and would
    /// overflow a 64-bit count).
    private static func isDigits(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 18 && text.utf8.allSatisfy { $0 &- 0x30 < 10 }
    }

    /// Why a header field name must not be relayed, or `nil`. Whitespace before the colon is
    /// removed by the caller (RFC 9112 §5.1 asks a proxy to).
    static func nameViolation(_ name: UnsafeRawBufferPointer) -> String? {
        var index = 0
        while index < name.count, RequestParser.isTokenByte(name[index]) { index += 1 }
        guard !name.isEmpty, index == name.count else {
            return "The origin sent a header field name that is not a token."
        }
        return nil
    }

    /// Why a header field value must not be relayed, or `nil`: CR, LF or NUL inside a value would
    /// split the field on the client's side (RFC 9110 §5.5).
    static func valueViolation(_ value: UnsafeRawBufferPointer) -> String? {
        guard ByteScan.containsLineBreakOrNUL(value) else { return nil }
        return "The origin sent a header field value with a CR, LF or NUL inside."
    }
}
