/// Word-at-a-time checks over head bytes: eight bytes per step (SWAR), so that the parsers pass
/// over ordinary bytes with a few instructions per word rather than per byte. Each check on a
/// word is exact as a yes/no answer; the byte it names is the first one that answers yes
/// (carries and borrows run only towards higher bytes, past a true one).
enum ByteScan {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte of `word` that is below `limit` (1...128), at least for the
    /// first such byte.
    @inline(__always)
    private static func below(_ limit: UInt8, _ word: UInt64) -> UInt64 {
        (word &- ones &* UInt64(limit)) & ~word & highs
    }

    /// The high bit of each byte of `word` that is above `limit` (0...127), at least for the
    /// first such byte.
    @inline(__always)
    private static func above(_ limit: UInt8, _ word: UInt64) -> UInt64 {
        ((word &+ ones &* UInt64(127 - limit)) | word) & highs
    }

    @inline(__always)
    private static func word(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    // After the whole words, the rest (fewer than eight bytes) is looked at as the last eight
    // bytes, overlapping bytes already passed (they answered no), or byte by byte when there
    // are fewer than eight in all: a copy into a padded word costs a call to memcpy.

    /// The index of the first byte at or below CR (0x0D: CR, LF and the control bytes before
    /// them) in `bytes[start..<end]`, or `end`.
    static func firstLineBreakOrControl(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Int {
        var index = start
        while index + 8 <= end {
            let hits = below(0x0E, word(bytes, index))
            if hits != 0 { return index + hits.trailingZeroBitCount / 8 }
            index += 8
        }
        guard index < end else { return end }
        guard end - start >= 8 else {
            while index < end, bytes[index] > 0x0D { index += 1 }
            return index
        }
        let hits = below(0x0E, word(bytes, end - 8))
        return hits == 0 ? end : end - 8 + hits.trailingZeroBitCount / 8
    }

    /// Whether every byte is visible ASCII (0x21...0x7E): a request target's bytes.
    static func isVisibleASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 8 <= bytes.count {
            let value = word(bytes, index)
            if below(0x21, value) | above(0x7E, value) != 0 { return false }
            index += 8
        }
        guard index < bytes.count else { return true }
        guard bytes.count >= 8 else { return bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F } }
        let value = word(bytes, bytes.count - 8)
        return below(0x21, value) | above(0x7E, value) == 0
    }

    /// Whether every byte of `bytes` is ASCII (below 0x80).
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 8 <= bytes.count {
            if word(bytes, index) & highs != 0 { return false }
            index += 8
        }
        guard index < bytes.count else { return true }
        if bytes.count >= 8 { return word(bytes, bytes.count - 8) & highs == 0 }
        while index < bytes.count {
            if bytes[index] >= 0x80 { return false }
            index += 1
        }
        return true
    }

    /// Whether `bytes` are all ASCII with none below 0x0E (no CR, LF or NUL): the usual field
    /// value, taken as it is; the others are looked at closer.
    static func isPlainASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 8 <= bytes.count {
            let value = word(bytes, index)
            if below(0x0E, value) | value & highs != 0 { return false }
            index += 8
        }
        guard index < bytes.count else { return true }
        if bytes.count >= 8 {
            let value = word(bytes, bytes.count - 8)
            return below(0x0E, value) | value & highs == 0
        }
        return bytes[index...].allSatisfy { $0 >= 0x0E && $0 < 0x80 }
    }

    /// What a field value's bytes are (RFC 9110 §5.5).
    enum ValueBytes {
        /// Visible ASCII, spaces and tabs.
        case ascii
        /// Some obs-text (past ASCII): text only if it is valid UTF-8.
        case obsText
        /// A control byte other than HTAB, or DEL: never in a value.
        case forbidden
    }

    /// What `bytes`, a field value, hold.
    static func fieldValue(_ bytes: UnsafeRawBufferPointer) -> ValueBytes {
        var ascii = true
        // A word with a byte below a space (HTAB among them), DEL or past ASCII is looked at
        // byte by byte; `false` at a forbidden one.
        func examine(_ range: Range<Int>) -> Bool {
            for index in range {
                let byte = bytes[index]
                guard byte == 0x09 || (byte >= 0x20 && byte != 0x7F) else { return false }
                if byte >= 0x80 { ascii = false }
            }
            return true
        }
        var index = 0
        while index + 8 <= bytes.count {
            let value = word(bytes, index)
            if below(0x20, value) | above(0x7E, value) != 0, !examine(index..<(index + 8)) { return .forbidden }
            index += 8
        }
        if index < bytes.count {
            if bytes.count < 8 {
                if !examine(0..<bytes.count) { return .forbidden }
            } else {
                let value = word(bytes, bytes.count - 8)
                if below(0x20, value) | above(0x7E, value) != 0, !examine((bytes.count - 8)..<bytes.count) {
                    return .forbidden
                }
            }
        }
        return ascii ? .ascii : .obsText
    }

    /// Whether `bytes` hold a CR, an LF or a NUL: bytes that would split a relayed field.
    static func containsLineBreakOrNUL(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 8 <= bytes.count {
            if below(0x0E, word(bytes, index)) != 0 {
                for offset in index..<(index + 8)
                where bytes[offset] == 0x0D || bytes[offset] == 0x0A || bytes[offset] == 0 {
                    return true
                }
            }
            index += 8
        }
        guard index < bytes.count else { return false }
        if bytes.count >= 8, below(0x0E, word(bytes, bytes.count - 8)) == 0 { return false }
        return bytes[index...].contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
    }
}
