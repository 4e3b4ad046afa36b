/// Removes null-valued object members from JSON text (AFNetworking's `removesKeysWithNullValues`),
/// validating the whole document on the way (RFC 8259, strict: UTF-8, escapes, number grammar).
///
/// The output is the input minus the removed members and the separator and whitespace that belonged
/// to them; every other byte (key order, number text, string escapes, indentation) is kept. A member
/// owns its preceding comma, or, when no member of its object has been kept yet, the whitespace
/// before it and the comma after it — so `{"a":null,"b":1}` becomes `{"b":1}` and
/// `{"a":1,"b":null}` becomes `{"a":1}`.
///
/// One pass over the bytes with an explicit stack (no recursion: depth is bounded by memory only);
/// kept stretches are copied in whole runs; strings and indentation are skipped eight bytes at a time.
public enum NullStripper {
    /// Which nulls go.
    public enum Mode: String, Sendable, Equatable, CaseIterable {
        /// Object members whose value is `null` (AFNetworking 3.x); `null` array elements stay.
        case members
        /// Members and `null` array elements too (AFNetworking 4.x).
        case all
    }

    /// What happened.
    public enum Outcome: Sendable, Equatable {
        /// Valid JSON with nothing to remove; `output` was not touched.
        case unchanged
        /// Valid JSON; `output` received the document minus `removed` nulls.
        case stripped(removed: Int)
        /// Not valid JSON; the first offending byte offset. `output` was not touched.
        case invalid(offset: Int)
    }

    /// Strips `input` into `output` (appended).
    public static func strip(_ input: UnsafeRawBufferPointer, mode: Mode, into output: inout [UInt8]) -> Outcome {
        guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count > 0 else {
            return .invalid(offset: 0)
        }
        var outcome = NullStripper.Outcome.unchanged
        let result = [UInt8](unsafeUninitializedCapacity: input.count) { buffer, initialized in
            var scanner = Scanner(
                base: base, count: input.count, out: buffer.baseAddress!, dropArrayNulls: mode == .all)
            outcome = scanner.run()
            initialized = scanner.written
        }
        guard case .stripped = outcome else { return outcome }
        if output.isEmpty { output = result } else { output.append(contentsOf: result) }
        return outcome
    }

    /// Strips a byte array; `nil` when it is not valid JSON, the same array when nothing was removed.
    public static func strip(_ input: [UInt8], mode: Mode = .members) -> [UInt8]? {
        var output: [UInt8] = []
        let outcome = input.withUnsafeBytes { strip($0, mode: mode, into: &output) }
        switch outcome {
        case .unchanged: return input
        case .stripped: return output
        case .invalid: return nil
        }
    }
}

/// Byte classes for strings: 0 = plain, 1 = quote, 2 = backslash, 3 = control, 4 = non-ASCII.
/// Written once at first use, read-only afterwards.
nonisolated(unsafe) private let stringClasses: UnsafePointer<UInt8> = {
    let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
    for byte in 0..<256 {
        table[byte] =
            switch byte {
            case 0x22: 1
            case 0x5C: 2
            case 0..<0x20: 3
            case 0x80...: 4
            default: 0
            }
    }
    return UnsafePointer(table)
}()

/// The scanner's pieces are free functions of (bytes, count, index) returning the next index
/// (`-1` = invalid), so that the index lives in a register through the whole pass.
private enum Lex {
    @inline(__always) static func load8(_ p: UnsafePointer<UInt8>, _ index: Int) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(p + index).loadUnaligned(as: UInt64.self))
    }

    @inline(__always) static func skipWhitespace(_ p: UnsafePointer<UInt8>, _ n: Int, _ start: Int) -> Int {
        // Compact JSON: usually no whitespace at all.
        if start < n, p[start] > 0x20 { return start }
        var i = start
        // Eight bytes at a time: the run of spaces at the front of each word is skipped in one step.
        while i &+ 8 <= n {
            let spaces = load8(p, i) ^ 0x2020_2020_2020_2020
            if spaces == 0 {
                i &+= 8
                continue
            }
            i &+= spaces.trailingZeroBitCount >> 3
            let c = p[i]
            guard c == 0x0A || c == 0x0D || c == 0x09 else { return i }
            i &+= 1
        }
        while i < n {
            let c = p[i]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return i }
            i &+= 1
        }
        return i
    }

    @inline(__always) static func isNull(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: Int) -> Bool {
        i &+ 4 <= n && UnsafeRawPointer(p + i).loadUnaligned(as: UInt32.self) == UInt32(littleEndian: 0x6C6C_756E)
    }

    /// A string starting at its opening quote.
    @inline(__always) static func string(
        _ p: UnsafePointer<UInt8>, _ n: Int, _ start: Int, _ table: UnsafePointer<UInt8>
    )
        -> Int
    {
        var i = start + 1
        while true {
            // Eight bytes at a time while none is a quote, a backslash, a control or a non-ASCII byte.
            while i &+ 8 <= n {
                let word = load8(p, i)
                let ones: UInt64 = 0x0101_0101_0101_0101
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                let special =
                    ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
                    | word
                let found = special & 0x8080_8080_8080_8080
                if found != 0 {
                    // The lowest flagged byte is exact (a borrow only flags bytes above a real match).
                    i &+= found.trailingZeroBitCount >> 3
                    break
                }
                i &+= 8
            }
            while i < n, table[Int(p[i])] == 0 { i &+= 1 }
            guard i < n else { return -1 }
            switch table[Int(p[i])] {
            case 1:
                return i &+ 1
            case 2:
                guard i &+ 1 < n else { return -1 }
                switch p[i &+ 1] {
                case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74: i &+= 2
                case 0x75:
                    guard i &+ 5 < n, isHex(p[i &+ 2]), isHex(p[i &+ 3]), isHex(p[i &+ 4]), isHex(p[i &+ 5]) else {
                        return -1
                    }
                    i &+= 6
                default: return -1
                }
            case 3:
                return -1
            default:
                let length = utf8Length(p, n, i)
                guard length > 0 else { return -1 }
                i += length
            }
        }
    }

    @inline(__always) static func isHex(_ c: UInt8) -> Bool {
        c &- 0x30 < 10 || (c | 0x20) &- 0x61 < 6
    }

    /// The length of a well-formed UTF-8 sequence at `index` (Unicode Table 3-7), or 0.
    static func utf8Length(_ p: UnsafePointer<UInt8>, _ n: Int, _ index: Int) -> Int {
        func continuation(_ k: Int, _ low: UInt8 = 0x80, _ high: UInt8 = 0xBF) -> Bool {
            index + k < n && p[index + k] >= low && p[index + k] <= high
        }
        switch p[index] {
        case 0xC2...0xDF: return continuation(1) ? 2 : 0
        case 0xE0: return continuation(1, 0xA0) && continuation(2) ? 3 : 0
        case 0xE1...0xEC, 0xEE...0xEF: return continuation(1) && continuation(2) ? 3 : 0
        case 0xED: return continuation(1, 0x80, 0x9F) && continuation(2) ? 3 : 0
        case 0xF0: return continuation(1, 0x90) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF1...0xF3: return continuation(1) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF4: return continuation(1, 0x80, 0x8F) && continuation(2) && continuation(3) ? 4 : 0
        default: return 0
        }
    }

    @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c &- 0x30 < 10 }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    @inline(__always) static func number(_ p: UnsafePointer<UInt8>, _ n: Int, _ start: Int) -> Int {
        var i = start
        if p[i] == 0x2D { i &+= 1 }
        guard i < n else { return -1 }
        if p[i] == 0x30 {
            i &+= 1
        } else if isDigit(p[i]) {
            i &+= 1
            while i < n, isDigit(p[i]) { i &+= 1 }
        } else {
            return -1
        }
        if i < n, p[i] == 0x2E {
            i &+= 1
            guard i < n, isDigit(p[i]) else { return -1 }
            while i < n, isDigit(p[i]) { i &+= 1 }
        }
        if i < n, p[i] | 0x20 == 0x65 {
            i &+= 1
            if i < n, p[i] == 0x2B || p[i] == 0x2D { i &+= 1 }
            guard i < n, isDigit(p[i]) else { return -1 }
            while i < n, isDigit(p[i]) { i &+= 1 }
        }
        return i
    }

    /// A string, number or literal at `i`.
    @inline(__always) static func scalar(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: Int, _ table: UnsafePointer<UInt8>)
        -> Int
    {
        switch p[i] {
        case 0x22: return string(p, n, i, table)
        case 0x74: return literal(p, n, i, 0x6575_7274, 4)  // true
        case 0x6E: return literal(p, n, i, 0x6C6C_756E, 4)  // null
        case 0x66:  // false
            return i &+ 5 <= n && literal(p, n, i &+ 1, 0x6573_6C61, 4) > 0 ? i &+ 5 : -1
        default: return number(p, n, i)
        }
    }

    @inline(__always) static func literal(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: Int, _ word: UInt32, _ count: Int)
        -> Int
    {
        i + count <= n && UnsafeRawPointer(p + i).loadUnaligned(as: UInt32.self) == UInt32(littleEndian: word)
            ? i + count : -1
    }
}

private struct Scanner {
    let p: UnsafePointer<UInt8>
    let n: Int
    let out: UnsafeMutablePointer<UInt8>
    let dropArrayNulls: Bool
    var written = 0

    static let objectBit: UInt8 = 1
    static let keptBit: UInt8 = 2

    init(base: UnsafePointer<UInt8>, count: Int, out: UnsafeMutablePointer<UInt8>, dropArrayNulls: Bool) {
        p = base
        n = count
        self.out = out
        self.dropArrayNulls = dropArrayNulls
    }

    mutating func run() -> NullStripper.Outcome {
        let p = self.p
        let n = self.n
        let out = self.out
        let table = stringClasses
        let dropArrayNulls = self.dropArrayNulls
        var i = 0
        /// Input before this offset has been copied to the output (or dropped).
        var copied = 0
        var written = 0
        var removed = 0
        /// The enclosing containers' flags: bit 0 = object, bit 1 = a member/element was kept.
        var stack = ContainerStack()
        defer { stack.deallocate() }
        defer { self.written = written }

        // A UTF-8 byte order mark is tolerated (RFC 8259 §8.1) and kept.
        if n >= 3, p[0] == 0xEF, p[1] == 0xBB, p[2] == 0xBF { i = 3 }
        i = Lex.skipWhitespace(p, n, i)
        guard i < n else { return .invalid(offset: i) }
        // The current container's flags; `depth` counts open containers.
        var current: UInt8 = 0
        var depth = 0
        var justOpened = false
        switch p[i] {
        case 0x7B:
            current = Scanner.objectBit
            depth = 1
            justOpened = true
            i &+= 1
        case 0x5B:
            depth = 1
            justOpened = true
            i &+= 1
        default:
            let next = Lex.scalar(p, n, i, table)
            guard next >= 0 else { return .invalid(offset: i) }
            i = next
        }
        while depth > 0 {
            let isObject = current & Scanner.objectBit != 0
            let close: UInt8 = isObject ? 0x7D : 0x5D
            // Where the next member starts, and the comma before it (-1 when none).
            var comma = -1
            var memberStart = i
            i = Lex.skipWhitespace(p, n, i)
            guard i < n else { return .invalid(offset: i) }
            if p[i] == close {
                i &+= 1
                depth &-= 1
                if depth > 0 { current = stack.pop() }
                justOpened = false
                continue
            }
            if !justOpened {
                guard p[i] == 0x2C else { return .invalid(offset: i) }
                comma = i
                i &+= 1
                memberStart = i
                i = Lex.skipWhitespace(p, n, i)
            }
            justOpened = false
            // A member (object) or element (array) begins at `i`.
            var dropped = false
            while true {
                guard i < n else { return .invalid(offset: i) }
                if isObject {
                    guard p[i] == 0x22 else { return .invalid(offset: i) }
                    let end = Lex.string(p, n, i, table)
                    guard end >= 0 else { return .invalid(offset: i) }
                    i = Lex.skipWhitespace(p, n, end)
                    guard i < n, p[i] == 0x3A else { return .invalid(offset: i) }
                    i = Lex.skipWhitespace(p, n, i &+ 1)
                } else if !dropArrayNulls {
                    break
                }
                guard Lex.isNull(p, n, i) else { break }
                let valueEnd = i &+ 4
                i = Lex.skipWhitespace(p, n, valueEnd)
                guard i < n else { return .invalid(offset: i) }
                let next = p[i]
                guard next == 0x2C || next == close else { return .invalid(offset: i) }
                if current & Scanner.keptBit != 0 {
                    // Not the first kept member: it owns the comma before it.
                    if comma > copied {
                        (out + written).update(from: p + copied, count: comma - copied)
                        written += comma - copied
                    }
                    copied = valueEnd
                    removed += 1
                } else if next == close {
                    if memberStart > copied {
                        (out + written).update(from: p + copied, count: memberStart - copied)
                        written += memberStart - copied
                    }
                    copied = valueEnd
                    removed += 1
                } else {
                    // First member so far: it owns the whitespace before it and the comma after it.
                    if memberStart > copied {
                        (out + written).update(from: p + copied, count: memberStart - copied)
                        written += memberStart - copied
                    }
                    copied = i &+ 1
                    removed += 1
                    i &+= 1
                    memberStart = i
                    comma = -1
                    i = Lex.skipWhitespace(p, n, i)
                    continue
                }
                i = valueEnd
                dropped = true
                break
            }
            // After a dropped member the loop goes on with the `,` or the close that follows it.
            if dropped { continue }
            current |= Scanner.keptBit
            guard i < n else { return .invalid(offset: i) }
            switch p[i] {
            case 0x7B:
                stack.push(current)
                current = Scanner.objectBit
                depth &+= 1
                justOpened = true
                i &+= 1
            case 0x5B:
                stack.push(current)
                current = 0
                depth &+= 1
                justOpened = true
                i &+= 1
            default:
                let next = Lex.scalar(p, n, i, table)
                guard next >= 0 else { return .invalid(offset: i) }
                i = next
            }
        }
        i = Lex.skipWhitespace(p, n, i)
        guard i == n else { return .invalid(offset: i) }
        guard removed > 0 else { return .unchanged }
        if copied < n {
            (out + written).update(from: p + copied, count: n - copied)
            written += n - copied
        }
        return .stripped(removed: removed)
    }
}

/// The enclosing containers' flags, one byte each, on a growable raw buffer (no per-push checks
/// beyond capacity).
private struct ContainerStack {
    private var base = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
    private var capacity = 256
    private var count = 0

    @inline(__always) mutating func push(_ flags: UInt8) {
        if count == capacity { grow() }
        base[count] = flags
        count &+= 1
    }

    @inline(__always) mutating func pop() -> UInt8 {
        count &-= 1
        return base[count]
    }

    private mutating func grow() {
        let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
        larger.update(from: base, count: count)
        base.deallocate()
        base = larger
        capacity *= 2
    }

    func deallocate() { base.deallocate() }
}
