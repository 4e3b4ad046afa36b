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
    /// The text is not JSON (or breaks a bound); nothing more is delivered. `atObjectLevel`: it
    /// failed between an object's members (the object is to blame, not its last member).
    mutating func malformed(_ message: String, at offset: Int, atObjectLevel: Bool)
}

/// A push tokenizer for JSON text arriving in pieces: state between pieces is the grammar
/// position, a bit per open container, and the bytes of at most one unfinished token (bounded by
/// `maxToken`). Memory never grows with the size of the document.
struct Tokenizer {
    enum Expect: UInt8 { case value, valueOrEnd, keyOrEnd, key, colon, commaOrEnd, done, failed }
    enum Partial: UInt8 { case none, string, number, literal }

    var expect = Expect.value
    /// One bit per open container, 1 = object.
    var kinds: [UInt64] = [0]
    private(set) var depth = 0
    var partial = Partial.none
    var carry: [UInt8] = []
    let scratch = ByteStack()
    /// Bytes before the current piece (for error offsets).
    var consumed = 0
    /// Where the token carried from an earlier piece began in the text (its errors' offsets).
    var carryStart = 0
    let maxToken: Int
    let maxDepth: Int

    init(maxToken: Int = 16 << 20, maxDepth: Int = 100_000) {
        self.maxToken = maxToken
        self.maxDepth = maxDepth
    }

    var failed: Bool { expect == .failed }
    var complete: Bool { expect == .done && partial == .none }

    /// Whether the innermost open container is an object (kept as containers open and close).
    var inObject = false

    @inline(__always) mutating func popped() {
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
            // Offsets counted from where the token began (`token` adds `consumed`).
            let end = consumed
            consumed = carryStart
            bytes.withUnsafeBufferPointer { buffer in
                _ = token(buffer.baseAddress!, 0, buffer.count, isNumber: isNumber, into: &sink)
            }
            consumed = end
            if expect == .failed { return }
        }
        if expect != .done || partial != .none {
            fail("the JSON text ends early (truncated)", at: consumed, into: &sink)
        }
    }

    mutating func fail<Sink: TokenSink>(_ message: String, at offset: Int, into sink: inout Sink) {
        // After `{`, a member's value or a comma the text is at the object's level: what fails
        // there is the object's, not the member's before it.
        let atObjectLevel = inObject && (expect == .keyOrEnd || expect == .key || expect == .commaOrEnd)
        expect = .failed
        sink.malformed(message, at: offset, atObjectLevel: atObjectLevel)
    }

    /// A byte as an error message names it: `'}'`, or `byte 0x80` for one that does not print.
    static func shown(_ byte: UInt8) -> String {
        byte > 0x20 && byte < 0x7F
            ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    /// Completes the token carried from the previous piece; the index where the rest of this
    /// piece starts, or -1 when the whole piece was carried.
    mutating func finishPartial<Sink: TokenSink>(
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
        // Offsets counted from where the token began (`token` adds `consumed`).
        let pieceStart = consumed
        consumed = carryStart
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
        consumed = pieceStart
        return ok ? end : -1
    }

    mutating func carryFrom(_ p: UnsafePointer<UInt8>, _ start: Int, _ n: Int, _ kind: Partial) {
        partial = kind
        carryStart = consumed + start
        carry.removeAll(keepingCapacity: true)
        carry.append(contentsOf: UnsafeBufferPointer(start: p + start, count: n - start))
    }

    // MARK: - The main loop

    mutating func run<Sink: TokenSink>(
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
                    i += 1
                    guard close(object: false, into: &sink) else { return }
                case 0x22:  // "
                    guard let end = string(p, n, i, into: &sink) else { return }
                    i = separator(p, n, end)
                default:
                    var j = i
                    while j < n, p[j] > 0x20, p[j] != 0x2C, p[j] != 0x5D, p[j] != 0x7D, p[j] != 0x3A { j += 1 }
                    if j == i {  // `,` `:` `]` `}` where a value belongs
                        let trailing = c == 0x5D && depth > 0 && !inObject
                        fail(
                            trailing ? "a trailing comma before ']'" : "\(Self.shown(c)) where a value belongs",
                            at: consumed + i, into: &sink)
                        return
                    }
                    if j == n {
                        carryFrom(p, i, n, c == 0x2D || (c >= 0x30 && c <= 0x39) ? .number : .literal)
                        return
                    }
                    guard token(p, i, j, isNumber: c == 0x2D || (c >= 0x30 && c <= 0x39), into: &sink) else { return }
                    i = separator(p, n, j)
                }
            } else if expect == .key || expect == .keyOrEnd {
                if c == 0x7D && expect == .keyOrEnd {
                    i += 1
                    guard close(object: true, into: &sink) else { return }
                    continue
                }
                guard c == 0x22 else {
                    let trailing = c == 0x7D && expect == .key
                    fail(
                        trailing ? "a trailing comma before '}'" : "\(Self.shown(c)) where a member name belongs",
                        at: consumed + i, into: &sink)
                    return
                }
                guard let end = string(p, n, i, into: &sink) else { return }
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
                    fail("\(Self.shown(c)) where ':' belongs", at: consumed + i, into: &sink)
                    return
                }
                expect = .value
                i += 1
            } else if expect == .commaOrEnd {
                if c == 0x2C {
                    expect = inObject ? .key : .value
                    i += 1
                } else if c == 0x7D && inObject {
                    i += 1
                    guard close(object: true, into: &sink) else { return }
                } else if c == 0x5D && !inObject {
                    i += 1
                    guard close(object: false, into: &sink) else { return }
                } else {
                    fail(
                        "\(Self.shown(c)) where ',' or '\(inObject ? "}" : "]")' belongs", at: consumed + i, into: &sink
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

    mutating func halt() { expect = .failed }

    /// The string opening at `i`, delivered; the index after it, or `nil` when the pass stops
    /// (the string goes on in the next piece, or the text is not JSON).
    @inline(__always) mutating func string<Sink: TokenSink>(
        _ p: UnsafePointer<UInt8>, _ n: Int, _ i: Int, into sink: inout Sink
    ) -> Int? {
        var flags: UInt8 = 0
        let end = Self.stringEnd(p, n, i, &flags)
        if end < 0 {
            carryFrom(p, i, n, .string)
            return nil
        }
        guard stringToken(p, i, end, flags: flags, into: &sink) else { return nil }
        return end
    }

    /// The innermost container ends; `false` when the sink stops the pass.
    @inline(__always) mutating func close<Sink: TokenSink>(object: Bool, into sink: inout Sink) -> Bool {
        popped()
        afterValue()
        guard object ? sink.endObject() : sink.endArray() else {
            halt()
            return false
        }
        return true
    }

    /// The comma right after a value, consumed in place (the common case: no trip through the
    /// dispatch); anything else is left to the main loop.
    @inline(__always) mutating func separator(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: Int) -> Int {
        guard expect == .commaOrEnd, i < n, p[i] == 0x2C else { return i }
        expect = inObject ? .key : .value
        return i + 1
    }

    @inline(__always) mutating func afterValue() {
        expect = depth == 0 ? .done : .commaOrEnd
    }

    @inline(__always) mutating func push(object: Bool) -> Bool {
        guard depth < maxDepth else { return false }
        let word = depth >> 6
        if word >= kinds.count { kinds.append(0) }
        let bit = UInt64(1) << UInt64(depth & 63)
        if object { kinds[word] |= bit } else { kinds[word] &= ~bit }
        depth += 1
        inObject = object
        return true
    }
}
