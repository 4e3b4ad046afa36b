/// JSON's lexical rules, shared by the document reader and the streaming tokenizer.
enum JSONGrammar {
    @inline(__always) static func isNumberByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x2B || byte == 0x2E || byte | 0x20 == 0x65
    }

    /// RFC 8259's number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isNumber<Bytes: Collection>(_ text: Bytes) -> Bool where Bytes.Element == UInt8 {
        var iterator = text.makeIterator()
        var byte = iterator.next()
        if byte == 0x2D { byte = iterator.next() }
        guard let first = byte, first >= 0x30 && first <= 0x39 else { return false }
        byte = iterator.next()
        if first != 0x30 {
            while let digit = byte, digit >= 0x30 && digit <= 0x39 { byte = iterator.next() }
        }
        if byte == 0x2E {
            byte = iterator.next()
            guard let digit = byte, digit >= 0x30 && digit <= 0x39 else { return false }
            while let digit = byte, digit >= 0x30 && digit <= 0x39 { byte = iterator.next() }
        }
        if let e = byte, e | 0x20 == 0x65 {
            byte = iterator.next()
            if byte == 0x2B || byte == 0x2D { byte = iterator.next() }
            guard let digit = byte, digit >= 0x30 && digit <= 0x39 else { return false }
            while let digit = byte, digit >= 0x30 && digit <= 0x39 { byte = iterator.next() }
        }
        return byte == nil
    }

    /// The text of plain string bytes, when they are valid UTF-8.
    static func utf8String<Bytes: Collection>(_ raw: Bytes) -> String? where Bytes.Element == UInt8 {
        guard isValidUTF8(raw) else { return nil }
        return String(decoding: raw, as: UTF8.self)
    }

    /// Strict UTF-8 (no overlongs, no surrogates, nothing past U+10FFFF).
    static func isValidUTF8<Bytes: Collection>(_ raw: Bytes) -> Bool where Bytes.Element == UInt8 {
        if let answer = raw.withContiguousStorageIfAvailable({
            isValidUTF8($0.baseAddress ?? UnsafePointer(bitPattern: 1)!, $0.count)
        }) {
            return answer
        }
        let bytes = Array(raw)
        return bytes.withUnsafeBufferPointer { isValidUTF8($0.baseAddress ?? UnsafePointer(bitPattern: 1)!, $0.count) }
    }

    /// The text of string bytes with escapes (`\n`, `\u00e9`, surrogate pairs); `nil` on a bad
    /// escape, a lone surrogate or invalid UTF-8.
    static func unescape<Bytes: Collection>(_ raw: Bytes) -> String? where Bytes.Element == UInt8, Bytes.Index == Int {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        guard unescape(raw, into: &out) else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    /// Where a string's content (between its quotes) has its first escape that is not one (RFC
    /// 8259 §7), or a `\u` surrogate without its pair; `nil` when every escape is good.
    static func firstBadEscape(_ p: UnsafePointer<UInt8>, _ count: Int) -> (offset: Int, surrogate: Bool)? {
        let raw = UnsafeBufferPointer(start: p, count: count)
        var index = 0
        while index < count {
            guard raw[index] == 0x5C else {
                index += 1
                continue
            }
            guard index + 1 < count else { return (index, false) }
            switch raw[index + 1] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                index += 2
            case UInt8(ascii: "u"):
                guard let scalar = hex4(raw, index + 2) else { return (index, false) }
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 12 <= count, raw[index + 6] == 0x5C, raw[index + 7] == UInt8(ascii: "u"),
                        let low = hex4(raw, index + 8), (0xDC00...0xDFFF).contains(low)
                    else { return (index, true) }
                    index += 12
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    return (index, true)
                } else {
                    index += 6
                }
            default: return (index, false)
            }
        }
        return nil
    }

    /// Unescapes into `out` (appending); `false` on a bad escape, a lone surrogate or invalid UTF-8.
    static func unescape<Bytes: Collection>(_ raw: Bytes, into out: inout [UInt8]) -> Bool
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var index = raw.startIndex
        let end = raw.endIndex
        let runStart = out.count
        while index < end {
            let byte = raw[index]
            guard byte == 0x5C else {
                out.append(byte)
                index += 1
                continue
            }
            guard index + 1 < end else { return false }
            let escaped = raw[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(raw, index) else { return false }
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 6 <= end, raw[index] == 0x5C, raw[index + 1] == UInt8(ascii: "u"),
                        let low = hex4(raw, index + 2), (0xDC00...0xDFFF).contains(low)
                    else { return false }
                    index += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    return false
                }
                guard let unicode = Unicode.Scalar(scalar) else { return false }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
            default: return false
            }
        }
        return isValidUTF8(out[runStart...])
    }

    /// Unescapes `count` bytes of string content into `out` (room for `count` bytes: escapes only
    /// shrink); the decoded length, or `nil` on a bad escape or a lone surrogate. Runs between
    /// backslashes are copied whole.
    static func unescape(_ p: UnsafePointer<UInt8>, _ count: Int, into out: UnsafeMutablePointer<UInt8>) -> Int? {
        var i = 0
        var o = 0
        while i < count {
            var run = i
            while run < count, p[run] != 0x5C { run += 1 }
            if run > i {
                (out + o).update(from: p + i, count: run - i)
                o += run - i
                i = run
            }
            guard i < count else { break }
            guard i + 1 < count else { return nil }
            let escaped = p[i + 1]
            i += 2
            switch escaped {
            case 0x22, 0x5C, 0x2F: out[o] = escaped
            case UInt8(ascii: "b"): out[o] = 0x08
            case UInt8(ascii: "f"): out[o] = 0x0C
            case UInt8(ascii: "n"): out[o] = 0x0A
            case UInt8(ascii: "r"): out[o] = 0x0D
            case UInt8(ascii: "t"): out[o] = 0x09
            case UInt8(ascii: "u"):
                guard var scalar = hex4(UnsafeBufferPointer(start: p, count: count), i) else { return nil }
                i += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 6 <= count, p[i] == 0x5C, p[i + 1] == UInt8(ascii: "u"),
                        let low = hex4(UnsafeBufferPointer(start: p, count: count), i + 2),
                        (0xDC00...0xDFFF).contains(low)
                    else { return nil }
                    i += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    return nil
                }
                // UTF-8 of the scalar: never longer than the escape it replaces.
                if scalar < 0x80 {
                    out[o] = UInt8(scalar)
                } else if scalar < 0x800 {
                    out[o] = UInt8(0xC0 | (scalar >> 6))
                    out[o + 1] = UInt8(0x80 | (scalar & 0x3F))
                    o += 1
                } else if scalar < 0x10000 {
                    out[o] = UInt8(0xE0 | (scalar >> 12))
                    out[o + 1] = UInt8(0x80 | ((scalar >> 6) & 0x3F))
                    out[o + 2] = UInt8(0x80 | (scalar & 0x3F))
                    o += 2
                } else {
                    out[o] = UInt8(0xF0 | (scalar >> 18))
                    out[o + 1] = UInt8(0x80 | ((scalar >> 12) & 0x3F))
                    out[o + 2] = UInt8(0x80 | ((scalar >> 6) & 0x3F))
                    out[o + 3] = UInt8(0x80 | (scalar & 0x3F))
                    o += 3
                }
            default: return nil
            }
            o += 1
        }
        return o
    }

    static func isASCII(_ p: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        var i = 0
        var acc: UInt64 = 0
        while i + 8 <= count {
            acc |= UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)
            i += 8
        }
        var tail: UInt8 = 0
        while i < count {
            tail |= p[i]
            i += 1
        }
        return acc & 0x8080_8080_8080_8080 == 0 && tail < 0x80
    }

    /// Strict UTF-8 over memory, ASCII eight bytes at a time.
    static func isValidUTF8(_ p: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        var i = 0
        while i < count {
            if i + 8 <= count, UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i += 8
                continue
            }
            let lead = p[i]
            if lead < 0x80 {
                i += 1
                continue
            }
            let length: Int
            var minimum: UInt32
            var scalar: UInt32
            switch lead {
            case 0xC2...0xDF:
                length = 1
                minimum = 0x80
                scalar = UInt32(lead & 0x1F)
            case 0xE0...0xEF:
                length = 2
                minimum = 0x800
                scalar = UInt32(lead & 0x0F)
            case 0xF0...0xF4:
                length = 3
                minimum = 0x10000
                scalar = UInt32(lead & 0x07)
            default: return false
            }
            for k in 1...length {
                guard i + k < count else { return false }
                let next = p[i + k]
                guard next & 0xC0 == 0x80 else { return false }
                scalar = scalar << 6 | UInt32(next & 0x3F)
            }
            guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else { return false }
            i += length + 1
        }
        return true
    }

    private static func hex4<Bytes: Collection>(_ raw: Bytes, _ index: Int) -> UInt32?
    where Bytes.Element == UInt8, Bytes.Index == Int {
        guard index + 4 <= raw.endIndex else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = raw[index + offset]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: return nil
            }
            value = value << 4 | digit
        }
        return value
    }
}
