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
    private var scratch: [UInt8] = []
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

    private var inObject: Bool { depth > 0 && (kinds[(depth - 1) >> 6] >> UInt64((depth - 1) & 63)) & 1 == 1 }

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
            case .string: return stringToken(q, 0, buffer.count, into: &sink)
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
            switch expect {
            case .value, .valueOrEnd:
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
                    depth -= 1
                    i += 1
                    afterValue()
                    guard sink.endArray() else { return halt() }
                case 0x22:  // "
                    let end = Self.stringEnd(p, n, i)
                    if end < 0 {
                        carryFrom(p, i, n, .string)
                        return
                    }
                    guard stringToken(p, i, end, into: &sink) else { return }
                    i = end
                default:
                    var j = i
                    while j < n, p[j] > 0x20, p[j] != 0x2C, p[j] != 0x5D, p[j] != 0x7D, p[j] != 0x3A { j += 1 }
                    if j == n {
                        carryFrom(p, i, n, c == 0x2D || (c >= 0x30 && c <= 0x39) ? .number : .literal)
                        return
                    }
                    guard token(p, i, j, isNumber: c == 0x2D || (c >= 0x30 && c <= 0x39), into: &sink) else { return }
                    i = j
                }
            case .keyOrEnd, .key:
                if c == 0x7D && expect == .keyOrEnd {
                    depth -= 1
                    i += 1
                    afterValue()
                    guard sink.endObject() else { return halt() }
                    continue
                }
                guard c == 0x22 else {
                    fail("expected a member name", at: consumed + i, into: &sink)
                    return
                }
                let end = Self.stringEnd(p, n, i)
                if end < 0 {
                    carryFrom(p, i, n, .string)
                    return
                }
                guard stringToken(p, i, end, into: &sink) else { return }
                i = end
            case .colon:
                guard c == 0x3A else {
                    fail("expected ':'", at: consumed + i, into: &sink)
                    return
                }
                expect = .value
                i += 1
            case .commaOrEnd:
                if c == 0x2C {
                    expect = inObject ? .key : .value
                    i += 1
                } else if c == 0x7D && inObject {
                    depth -= 1
                    i += 1
                    afterValue()
                    guard sink.endObject() else { return halt() }
                } else if c == 0x5D && !inObject {
                    depth -= 1
                    i += 1
                    afterValue()
                    guard sink.endArray() else { return halt() }
                } else {
                    fail(
                        "expected ',' or the end of the \(inObject ? "object" : "array")", at: consumed + i, into: &sink
                    )
                    return
                }
            case .done:
                fail("text after the JSON value", at: consumed + i, into: &sink)
                return
            case .failed:
                return
            }
        }
    }

    private mutating func halt() { expect = .failed }

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
        return true
    }

    /// The index after the closing quote of the string opening at `start`, or -1 when it does
    /// not end in this piece.
    @inline(__always) static func stringEnd(_ p: UnsafePointer<UInt8>, _ n: Int, _ start: Int) -> Int {
        var i = start + 1
        while true {
            while i &+ 8 <= n {
                let word = UInt64(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self))
                let found = quoteOrBackslash(word)
                if found == 0 {
                    i &+= 8
                    continue
                }
                i &+= found.trailingZeroBitCount >> 3
                break
            }
            while i < n, p[i] != 0x22, p[i] != 0x5C { i += 1 }
            guard i < n else { return -1 }
            if p[i] == 0x22 { return i + 1 }
            i += 2
            guard i < n else { return -1 }
        }
    }

    @inline(__always) static func quoteOrBackslash(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        return (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & 0x8080_8080_8080_8080
    }

    /// The string from `start` (its opening quote) to `end` (after its closing quote), checked and
    /// delivered as a member name or a value.
    private mutating func stringToken<Sink: TokenSink>(
        _ p: UnsafePointer<UInt8>, _ start: Int, _ end: Int, into sink: inout Sink
    ) -> Bool {
        let contentStart = start + 1
        let count = end - 1 - contentStart
        // Controls, backslashes and non-ASCII bytes, eight at a time.
        var flags: UInt64 = 0
        var k = contentStart
        let ones: UInt64 = 0x0101_0101_0101_0101
        while k &+ 8 <= end - 1 {
            let word = UInt64(littleEndian: UnsafeRawPointer(p + k).loadUnaligned(as: UInt64.self))
            let backslash = word ^ (ones &* 0x5C)
            flags |= ((word &- ones &* 0x20) & ~word) | ((backslash &- ones) & ~backslash) | word
            k &+= 8
        }
        var tail: UInt8 = 0
        var control = false
        var escaped = false
        while k < end - 1 {
            let c = p[k]
            tail |= c
            if c < 0x20 { control = true }
            if c == 0x5C { escaped = true }
            k += 1
        }
        let high = (flags & 0x8080_8080_8080_8080) != 0 || tail >= 0x80
        if flags & 0x8080_8080_8080_8080 != 0 {
            // Something flagged in the words: find out what, exactly.
            for index in contentStart..<(end - 1) {
                let c = p[index]
                if c < 0x20 { control = true }
                if c == 0x5C { escaped = true }
            }
        }
        if control {
            fail("a control character inside a string", at: consumed + start, into: &sink)
            return false
        }
        var bytes = UnsafeRawBufferPointer(start: p + contentStart, count: count)
        var ascii = !high
        if escaped {
            scratch.removeAll(keepingCapacity: true)
            guard JSONGrammar.unescape(UnsafeBufferPointer(start: p + contentStart, count: count), into: &scratch)
            else {
                fail("a string with a bad escape or invalid UTF-8", at: consumed + start, into: &sink)
                return false
            }
            ascii = !scratch.contains { $0 >= 0x80 }
            return scratch.withUnsafeBytes { decoded in
                deliverString(Token(kind: .string, bytes: decoded, ascii: ascii), into: &sink)
            }
        }
        if high, !JSONGrammar.isValidUTF8(UnsafeBufferPointer(start: p + contentStart, count: count)) {
            fail("a string with invalid UTF-8", at: consumed + start, into: &sink)
            return false
        }
        bytes = UnsafeRawBufferPointer(start: p + contentStart, count: count)
        return deliverString(Token(kind: .string, bytes: bytes, ascii: ascii), into: &sink)
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
        } else if bytes.elementsEqual("true".utf8) {
            kind = .trueLiteral
        } else if bytes.elementsEqual("false".utf8) {
            kind = .falseLiteral
        } else if bytes.elementsEqual("null".utf8) {
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
