/// Text written straight into byte buffers on the per-request paths (access lines, response
/// heads): no intermediate `String` per number or piece.
extension Array where Element == UInt8 {
    /// `value`'s decimal digits (`String(value)` costs a generic description call and a copy).
    mutating func appendDecimal(_ value: Int64) {
        if value < 0 { append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 19 digits, filled from the end
        Swift.withUnsafeMutableBytes(of: &digits) { raw in
            var index = raw.count
            repeat {
                index -= 1
                raw[index] = UInt8(truncatingIfNeeded: 0x30 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[index...]))
        }
    }

    /// A literal's bytes.
    mutating func append(_ text: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A string's UTF-8 bytes, copied from its storage in one piece (appending its `utf8` view
    /// goes element by element through the generic path: about 170 instructions a call).
    mutating func append(utf8 text: String) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }
}
