// The null stripper's lexical pieces: byte classes and the per-token scanners.

/// Byte classes for strings: 0 = plain, 1 = quote, 2 = backslash, 3 = control, 4 = non-ASCII.
/// Written once at first use, read-only afterwards.
nonisolated(unsafe) let jsonStringClasses: UnsafePointer<UInt8> = {
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
enum Lex {
    @inline(__always) static func load8(_ p: UnsafePointer<UInt8>, _ index: Int) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(p + index).loadUnaligned(as: UInt64.self))
    }

    @inline(__always) static func skipWhitespace(_ p: UnsafePointer<UInt8>, _ n: Int, _ start: Int) -> Int {
        // Compact JSON: usually no whitespace at all.
        if start < n, p[start] > 0x20 { return start }
        // One space (`": "`, `", "`): as common in pretty-printed JSON.
        if start &+ 1 < n, p[start] == 0x20, p[start &+ 1] > 0x20 { return start &+ 1 }
        var i = start
        // Eight bytes at a time: the run of bytes up to 0x20 at the front of the word is the candidate
        // whitespace; it is accepted at once when it is spaces led by one LF or CR LF (indentation).
        while i &+ 8 <= n {
            let word = load8(p, i)
            // The high bit of each byte above 0x20 (exact per byte: no carry crosses a byte).
            let above = (((word & 0x7F7F_7F7F_7F7F_7F7F) &+ 0x5F5F_5F5F_5F5F_5F5F) | word) & 0x8080_8080_8080_8080
            let run = above == 0 ? 8 : above.trailingZeroBitCount >> 3
            let inRun: UInt64 = run == 8 ? ~0 : (1 &<< UInt64(run &* 8)) &- 1
            // Each byte XOR 0x20: 0 for a space, 0x2A for LF, 0x2D for CR, 0x29 for a tab.
            let others = (word ^ 0x2020_2020_2020_2020) & inRun
            if others != 0 && others != 0x2A && others != 0x2A2D {
                for k in 0..<run {
                    let c = p[i &+ k]
                    guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return i &+ k }
                }
            }
            i &+= run
            if run < 8 { return i }
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

    /// The high bit of each byte of `word` that is a quote, a backslash, a control or a non-ASCII
    /// byte; the lowest flagged byte is exact (a borrow only flags bytes above a real match).
    @inline(__always) static func stringSpecials(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let special =
            ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word) | word
        return special & 0x8080_8080_8080_8080
    }

    /// A string starting at its opening quote. Short plain strings (keys, mostly) end inside the
    /// first eight bytes and are done here, inlined; the rest go to ``longString``.
    @inline(__always) static func string(
        _ p: UnsafePointer<UInt8>, _ n: Int, _ start: Int, _ table: UnsafePointer<UInt8>
    )
        -> Int
    {
        if start &+ 9 <= n {
            let found = stringSpecials(load8(p, start &+ 1))
            if found != 0 {
                let end = start &+ 1 &+ found.trailingZeroBitCount >> 3
                if p[end] == 0x22 { return end &+ 1 }
            }
        }
        return longString(p, n, start, table)
    }

    @inline(never) static func longString(
        _ p: UnsafePointer<UInt8>, _ n: Int, _ start: Int, _ table: UnsafePointer<UInt8>
    )
        -> Int
    {
        var i = start + 1
        while true {
            // Eight bytes at a time while none is a quote, a backslash, a control or a non-ASCII byte.
            while i &+ 8 <= n {
                let found = stringSpecials(load8(p, i))
                if found != 0 {
                    // The lowest flagged byte is exact (a borrow only flags bytes above a real match).
                    i &+= found.trailingZeroBitCount >> 3
                    // Most often the closing quote: no table lookup on that path.
                    if p[i] == 0x22 { return i &+ 1 }
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
