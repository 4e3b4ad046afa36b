/// One JSON scalar or member name as the tokenizer saw it. `bytes` is valid only during the
/// call that receives it: for strings, the decoded UTF-8 content (escapes resolved); for numbers
/// and literals, their text.
struct Token {
    enum Kind: UInt8 { case string, number, trueLiteral, falseLiteral, null }
    var kind: Kind
    var bytes: UnsafeRawBufferPointer
    /// No byte ≥ 0x80 (code points = bytes).
    var ascii: Bool

    var text: String { String(decoding: bytes, as: UTF8.self) }
}

/// What the tokenizer calls, in document order. Each returns `false` to stop the pass.
protocol TokenSink {
    mutating func beginObject() -> Bool
    mutating func key(_ token: Token) -> Bool
    mutating func endObject() -> Bool
    mutating func beginArray() -> Bool
    mutating func endArray() -> Bool
    mutating func scalar(_ token: Token) -> Bool
    /// The text is not JSON (or breaks a bound); nothing more is delivered.
    mutating func malformed(_ message: String, at offset: Int)
}

/// A push tokenizer for JSON text arriving in pieces: state between pieces is the grammar
/// position, a bit per open container, and the bytes of at most one unfinished token (bounded by
/// `maxToken`). Memory never grows with the size of the document.
struct Tokenizer {
    private enum Expect: UInt8 { case value, valueOrEnd, keyOrEnd, key, colon, commaOrEnd, done, failed }
    private enum Partial: UInt8 { case none, string, number, literal }

    private var expect = Expect.value
    /// One bit per open container, 1 = object.
    private var kinds: [UInt64] = [0]
    private(set) var depth = 0
    private var partial = Partial.none
    private var carry: [UInt8] = []
    private let scratch = ByteStack()
    /// Bytes before the current piece (for error offsets).
    private var consumed = 0
    let maxToken: Int
    let maxDepth: Int

    init(maxToken: Int = 16 << 20, maxDepth: Int = 100_000) {
        self.maxToken = maxToken
        self.maxDepth = maxDepth
    }

    var failed: Bool { expect == .failed }
    var complete: Bool { expect == .done && partial == .none }

    /// Whether the innermost open container is an object (kept as containers open and close).
    private var inObject = false

    @inline(__always) private mutating func popped() {
        depth -= 1
        inObject = depth > 0 && (kinds[(depth - 1) >> 6] >> UInt64((depth - 1) & 63)) & 1 == 1
    }

    mutating func feed<Sink: TokenSink>(_ piece: UnsafeRawBufferPointer, into sink: inout Sink) {
        guard expect != .failed, let base = piece.baseAddress, piece.count > 0 else { return }
        let p = base.assumingMemoryBound(to: UInt8.self)
        let n = piece.count
        var i = 0
        if partial != .none {
            i = finishPartial(p, n, into: &sink)
            if i < 0 {
                consumed += n
                return
            }
        }
        run(p, n, from: i, into: &sink)
        consumed += n
    }

    /// The end of the text: a number at the top level ends here; anything unfinished is truncation.
    mutating func finish<Sink: TokenSink>(into sink: inout Sink) {
        guard expect != .failed else { return }
        if partial == .number || partial == .literal {
            let bytes = carry
            let isNumber = partial == .number
            partial = .none
            carry = []
            bytes.withUnsafeBufferPointer { buffer in
                _ = token(buffer.baseAddress!, 0, buffer.count, isNumber: isNumber, into: &sink)
            }
            if expect == .failed { return }
        }
        if expect != .done || partial != .none {
            fail("the JSON text ends early (truncated)", at: consumed, into: &sink)
        }
    }

    private mutating func fail<Sink: TokenSink>(_ message: String, at offset: Int, into sink: inout Sink) {
        expect = .failed
        sink.malformed(message, at: offset)
    }

    /// Completes the token carried from the previous piece; the index where the rest of this
    /// piece starts, or -1 when the whole piece was carried.
    private mutating func finishPartial<Sink: TokenSink>(
        _ p: UnsafePointer<UInt8>, _ n: Int, into sink: inout Sink
    ) -> Int {
        var end = 0
        switch partial {
        case .string:
            // Whether the carried text ends inside an escape: count the trailing backslashes.
            var escaped = false
            var k = carry.count - 1
            while k > 0 && carry[k] == 0x5C {
                escaped.toggle()
                k -= 1
            }
            var j = escaped ? 1 : 0
            var found = false
            while j < n {
                let c = p[j]
                if c == 0x22 {
                    found = true
                    break
                }
                j += c == 0x5C ? 2 : 1
            }
            guard found else {
                guard carry.count + n <= maxToken else {
                    fail("a string longer than \(maxToken) bytes", at: consumed, into: &sink)
                    return -1
                }
                carry.append(contentsOf: UnsafeBufferPointer(start: p, count: n))
                return -1
            }
            end = j + 1
        case .number, .literal:
            var j = 0
            while j < n, p[j] > 0x20, p[j] != 0x2C, p[j] != 0x5D, p[j] != 0x7D, p[j] != 0x3A { j += 1 }
            guard j < n else {
                guard carry.count + n <= 4096 else {
                    fail("a number longer than 4096 bytes", at: consumed, into: &sink)
                    return -1
                }
                carry.append(contentsOf: UnsafeBufferPointer(start: p, count: n))
                return -1
            }
            end = j
        case .none:
            return 0
        }
        carry.append(contentsOf: UnsafeBufferPointer(start: p, count: end))
        let kind = partial
        partial = .none
        let bytes = carry
        carry.removeAll(keepingCapacity: true)
        let ok = bytes.withUnsafeBufferPointer { buffer -> Bool in
            let q = buffer.baseAddress!
            switch kind {
            case .string:
                var flags: UInt8 = 0
                _ = Self.stringEnd(q, buffer.count, 0, &flags)
                return stringToken(q, 0, buffer.count, flags: flags, into: &sink)
            default: return token(q, 0, buffer.count, isNumber: kind == .number, into: &sink)
            }
        }
        return ok ? end : -1
    }

    private mutating func carryFrom(_ p: UnsafePointer<UInt8>, _ start: Int, _ n: Int, _ kind: Partial) {
        partial = kind
        carry.removeAll(keepingCapacity: true)
        carry.append(contentsOf: UnsafeBufferPointer(start: p + start, count: n - start))
    }

    // MARK: - The main loop

    private mutating func run<Sink: TokenSink>(
        _ p: UnsafePointer<UInt8>, _ n: Int, from start: Int, into sink: inout Sink
    ) {
        var i = start
        while true {
            // Whitespace.
            while i < n, p[i] <= 0x20 {
                let c = p[i]
                guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else {
                    fail("a control character outside a string", at: consumed + i, into: &sink)
                    return
                }
                i += 1
            }
            guard i < n else { return }
            let c = p[i]
            // Compares, not a jump table: an indirect jump per token mispredicts (perf).
            if expect == .value || expect == .valueOrEnd {
                switch c {
                case 0x7B:  // {
                    guard push(object: true) else {
                        fail("nested deeper than \(maxDepth)", at: consumed + i, into: &sink)
                        return
                    }
                    expect = .keyOrEnd
                    i += 1
                    guard sink.beginObject() else { return halt() }
                case 0x5B:  // [
                    guard push(object: false) else {
                        fail("nested deeper than \(maxDepth)", at: consumed + i, into: &sink)
                        return
                    }
                    expect = .valueOrEnd
                    i += 1
                    guard sink.beginArray() else { return halt() }
                case 0x5D where expect == .valueOrEnd:  // ]
                    popped()
                    i += 1
                    afterValue()
                    guard sink.endArray() else { return halt() }
                case 0x22:  // "
                    var flags: UInt8 = 0
                    let end = Self.stringEnd(p, n, i, &flags)
                    if end < 0 {
                        carryFrom(p, i, n, .string)
                        return
                    }
                    guard stringToken(p, i, end, flags: flags, into: &sink) else { return }
                    i = end
                    i = separator(p, n, i)
                default:
                    var j = i
                    while j < n, p[j] > 0x20, p[j] != 0x2C, p[j] != 0x5D, p[j] != 0x7D, p[j] != 0x3A { j += 1 }
                    if j == n {
                        carryFrom(p, i, n, c == 0x2D || (c >= 0x30 && c <= 0x39) ? .number : .literal)
                        return
                    }
                    guard token(p, i, j, isNumber: c == 0x2D || (c >= 0x30 && c <= 0x39), into: &sink) else { return }
                    i = separator(p, n, j)
                }
            } else if expect == .key || expect == .keyOrEnd {
                if c == 0x7D && expect == .keyOrEnd {
                    popped()
                    i += 1
                    afterValue()
                    guard sink.endObject() else { return halt() }
                    continue
                }
                guard c == 0x22 else {
                    fail("expected a member name", at: consumed + i, into: &sink)
                    return
                }
                var flags: UInt8 = 0
                let end = Self.stringEnd(p, n, i, &flags)
                if end < 0 {
                    carryFrom(p, i, n, .string)
                    return
                }
                guard stringToken(p, i, end, flags: flags, into: &sink) else { return }
                i = end
                // The colon right after the name (compact or one space): no trip through the dispatch.
                if i < n, p[i] == 0x3A {
                    expect = .value
                    i += 1
                } else if i + 1 < n, p[i] == 0x20, p[i + 1] == 0x3A {
                    expect = .value
                    i += 2
                }
            } else if expect == .colon {
                guard c == 0x3A else {
                    fail("expected ':'", at: consumed + i, into: &sink)
                    return
                }
                expect = .value
                i += 1
            } else if expect == .commaOrEnd {
                if c == 0x2C {
                    expect = inObject ? .key : .value
                    i += 1
                } else if c == 0x7D && inObject {
                    popped()
                    i += 1
                    afterValue()
                    guard sink.endObject() else { return halt() }
                } else if c == 0x5D && !inObject {
                    popped()
                    i += 1
                    afterValue()
                    guard sink.endArray() else { return halt() }
                } else {
                    fail(
                        "expected ',' or the end of the \(inObject ? "object" : "array")", at: consumed + i, into: &sink
                    )
                    return
                }
            } else if expect == .done {
                fail("text after the JSON value", at: consumed + i, into: &sink)
                return
            } else {
                return
            }
        }
    }

    private mutating func halt() { expect = .failed }

    /// The comma right after a value, consumed in place (the common case: no trip through the
    /// dispatch); anything else is left to the main loop.
    @inline(__always) private mutating func separator(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: Int) -> Int {
        guard expect == .commaOrEnd, i < n, p[i] == 0x2C else { return i }
        expect = inObject ? .key : .value
        return i + 1
    }

    @inline(__always) private mutating func afterValue() {
        expect = depth == 0 ? .done : .commaOrEnd
    }

    @inline(__always) private mutating func push(object: Bool) -> Bool {
        guard depth < maxDepth else { return false }
        let word = depth >> 6
        if word >= kinds.count { kinds.append(0) }
        let bit = UInt64(1) << UInt64(depth & 63)
        if object { kinds[word] |= bit } else { kinds[word] &= ~bit }
        depth += 1
        inObject = object
        return true
    }

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
    @inline(__always) private mutating func stringToken<Sink: TokenSink>(
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

    @inline(never) private mutating func unusualString<Sink: TokenSink>(
        _ content: UnsafePointer<UInt8>, _ count: Int, at start: Int, flags: UInt8, into sink: inout Sink
    ) -> Bool {
        if flags & Self.hasControl != 0 {
            fail("a control character inside a string", at: consumed + start, into: &sink)
            return false
        }
        if flags & Self.hasEscape != 0 {
            let out = scratch.reserve(count)
            guard let length = JSONGrammar.unescape(content, count, into: out) else {
                fail("a string with a bad escape", at: consumed + start, into: &sink)
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

    @inline(__always) private mutating func deliverString<Sink: TokenSink>(_ token: Token, into sink: inout Sink)
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

    /// A number or a literal from `start` to `end`.
    private mutating func token<Sink: TokenSink>(
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
            fail("not a JSON value", at: consumed + start, into: &sink)
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
