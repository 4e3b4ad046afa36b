// The tokenizer's scalars: strings scanned eight bytes at a time, checked and decoded; numbers and literals.

extension Tokenizer {
    /// Bits of what a string holds besides plain ASCII.
    static let hasEscape: UInt8 = 1
    static let hasHigh: UInt8 = 2
    static let hasControl: UInt8 = 4

    /// The index after the closing quote of the string opening at `start`, or -1 when it does
    /// not end in this piece; `flags` gets ``hasEscape``, ``hasHigh`` and ``hasControl``. One pass,
    /// eight bytes at a time.
    @inline(__always) static func stringEnd(_ p: UnsafePointer<UInt8>, _ n: Int, _ start: Int, _ flags: inout UInt8)
        -> Int
    {
        var i = start + 1
        let ones: UInt64 = 0x0101_0101_0101_0101
        var highMask: UInt64 = 0x8080_8080_8080_8080
        while true {
            while i &+ 8 <= n {
                let word = UInt64(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self))
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                let special =
                    (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
                        | (word & highMask)) & 0x8080_8080_8080_8080
                if special == 0 {
                    i &+= 8
                    continue
                }
                // The lowest flagged byte is exact.
                i &+= special.trailingZeroBitCount >> 3
                break
            }
            guard i < n else { return -1 }
            let c = p[i]
            if c == 0x22 { return i + 1 }
            if c == 0x5C {
                flags |= hasEscape
                i += 2
                guard i <= n else { return -1 }
                continue
            }
            if c >= 0x80 {
                flags |= hasHigh
                highMask = 0
            } else if c < 0x20 {
                flags |= hasControl
            }
            i += 1
        }
    }

    /// The string from `start` (its opening quote) to `end` (after its closing quote), checked and
    /// delivered as a member name or a value.
    @inline(__always) mutating func stringToken<Sink: TokenSink>(
        _ p: UnsafePointer<UInt8>, _ start: Int, _ end: Int, flags: UInt8, into sink: inout Sink
    ) -> Bool {
        let contentStart = start + 1
        let count = end - 1 - contentStart
        if flags == 0 {
            return deliverString(
                Token(kind: .string, bytes: UnsafeRawBufferPointer(start: p + contentStart, count: count), ascii: true),
                into: &sink)
        }
        return unusualString(p + contentStart, count, at: start, flags: flags, into: &sink)
    }

    @inline(never) mutating func unusualString<Sink: TokenSink>(
        _ content: UnsafePointer<UInt8>, _ count: Int, at start: Int, flags: UInt8, into sink: inout Sink
    ) -> Bool {
        if flags & Self.hasControl != 0 {
            fail("a control character inside a string", at: consumed + start, into: &sink)
            return false
        }
        if flags & Self.hasEscape != 0 {
            let out = scratch.reserve(count)
            guard let length = JSONGrammar.unescape(content, count, into: out) else {
                // Said where the escape is, when it is one (else the text is not UTF-8).
                if let bad = JSONGrammar.firstBadEscape(content, count) {
                    let what = bad.surrogate ? "an unpaired surrogate escape" : "a bad escape"
                    fail("a string with \(what)", at: consumed + start + 1 + bad.offset, into: &sink)
                } else {
                    fail("a string that is not UTF-8", at: consumed + start, into: &sink)
                }
                return false
            }
            let decoded = UnsafePointer(out)
            let ascii = JSONGrammar.isASCII(decoded, length)
            if !ascii, !JSONGrammar.isValidUTF8(decoded, length) {
                fail("a string with invalid UTF-8", at: consumed + start, into: &sink)
                return false
            }
            return deliverString(
                Token(kind: .string, bytes: UnsafeRawBufferPointer(start: decoded, count: length), ascii: ascii),
                into: &sink)
        }
        guard JSONGrammar.isValidUTF8(content, count) else {
            fail("a string with invalid UTF-8", at: consumed + start, into: &sink)
            return false
        }
        return deliverString(
            Token(kind: .string, bytes: UnsafeRawBufferPointer(start: content, count: count), ascii: false), into: &sink
        )
    }

    @inline(__always) mutating func deliverString<Sink: TokenSink>(_ token: Token, into sink: inout Sink)
        -> Bool
    {
        if expect == .keyOrEnd || expect == .key {
            expect = .colon
            guard sink.key(token) else {
                halt()
                return false
            }
        } else {
            afterValue()
            guard sink.scalar(token) else {
                halt()
                return false
            }
        }
        return true
    }

    /// Where a word that is no literal first goes wrong: past the prefix it shares with the
    /// literal its first byte begins (`tru}` at its fourth byte, `notjson` at its second), else
    /// at its first byte.
    static func firstWrongByte(_ word: UnsafeRawBufferPointer) -> Int {
        let literal: StaticString
        switch word.first {
        case UInt8(ascii: "t"): literal = "true"
        case UInt8(ascii: "f"): literal = "false"
        case UInt8(ascii: "n"): literal = "null"
        default: return 0
        }
        var index = 0
        while index < word.count, index < literal.utf8CodeUnitCount, word[index] == literal.utf8Start[index] {
            index += 1
        }
        return index
    }

    /// A number or a literal from `start` to `end`.
    mutating func token<Sink: TokenSink>(
        _ p: UnsafePointer<UInt8>, _ start: Int, _ end: Int, isNumber: Bool, into sink: inout Sink
    ) -> Bool {
        let bytes = UnsafeRawBufferPointer(start: p + start, count: end - start)
        let kind: Token.Kind
        if isNumber {
            guard JSONGrammar.isNumber(UnsafeBufferPointer(start: p + start, count: end - start)) else {
                fail("not a JSON number", at: consumed + start, into: &sink)
                return false
            }
            kind = .number
        } else if bytes.count == 4, p[start] == 0x74, p[start + 1] == 0x72, p[start + 2] == 0x75, p[start + 3] == 0x65 {
            kind = .trueLiteral
        } else if bytes.count == 5, p[start] == 0x66, p[start + 1] == 0x61, p[start + 2] == 0x6C, p[start + 3] == 0x73,
            p[start + 4] == 0x65
        {
            kind = .falseLiteral
        } else if bytes.count == 4, p[start] == 0x6E, p[start + 1] == 0x75, p[start + 2] == 0x6C, p[start + 3] == 0x6C {
            kind = .null
        } else {
            fail("not a JSON value", at: consumed + start + Self.firstWrongByte(bytes), into: &sink)
            return false
        }
        afterValue()
        guard sink.scalar(Token(kind: kind, bytes: bytes, ascii: true)) else {
            halt()
            return false
        }
        return true
    }
}
