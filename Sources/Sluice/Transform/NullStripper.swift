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
/// kept stretches are copied in whole runs.
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
        /// Not valid JSON; the first offending byte offset. `output` holds a partial result: discard it.
        case invalid(offset: Int)
    }

    /// Strips `input` into `output` (appended).
    public static func strip(_ input: UnsafeRawBufferPointer, mode: Mode, into output: inout [UInt8]) -> Outcome {
        guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count > 0 else {
            return .invalid(offset: 0)
        }
        var scanner = Scanner(base: base, count: input.count, dropArrayNulls: mode == .all)
        let outcome = scanner.run(into: &output)
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

/// Byte classes for the string scanner: 0 = plain, 1 = quote, 2 = backslash, 3 = control, 4 = non-ASCII.
private let stringClass: [UInt8] = (0..<256).map { byte -> UInt8 in
    switch byte {
    case 0x22: 1
    case 0x5C: 2
    case 0..<0x20: 3
    case 0x80...: 4
    default: 0
    }
}

private struct Scanner {
    let p: UnsafePointer<UInt8>
    let n: Int
    let dropArrayNulls: Bool
    var i = 0
    /// Input before this offset has been copied to the output (or dropped).
    var copied = 0
    var removed = 0
    /// One byte per open container: bit 0 = object, bit 1 = a member/element was kept.
    var stack: [UInt8] = []

    static let objectBit: UInt8 = 1
    static let keptBit: UInt8 = 2

    init(base: UnsafePointer<UInt8>, count: Int, dropArrayNulls: Bool) {
        p = base
        n = count
        self.dropArrayNulls = dropArrayNulls
        stack.reserveCapacity(64)
    }

    @inline(__always) mutating func skipWhitespace() {
        while i < n {
            let c = p[i]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            i += 1
        }
    }

    /// Drops input `[from, to)`: copies what precedes it first.
    @inline(__always) mutating func drop(from: Int, to: Int, into output: inout [UInt8]) {
        if removed == 0 { output.reserveCapacity(n) }
        if from > copied { output.append(contentsOf: UnsafeBufferPointer(start: p + copied, count: from - copied)) }
        copied = to
        removed += 1
    }

    @inline(__always) func isNullLiteral(at index: Int) -> Bool {
        index + 3 < n && p[index] == 0x6E && p[index + 1] == 0x75 && p[index + 2] == 0x6C && p[index + 3] == 0x6C
    }

    /// Scans a string starting at its opening quote; `false` if invalid.
    @inline(__always) mutating func scanString() -> Bool {
        i += 1
        return stringClass.withUnsafeBufferPointer { table in
            while i < n {
                let c = p[i]
                switch table[Int(c)] {
                case 0:
                    i += 1
                case 1:
                    i += 1
                    return true
                case 2:
                    guard i + 1 < n else { return false }
                    switch p[i + 1] {
                    case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74: i += 2
                    case 0x75:
                        guard i + 5 < n else { return false }
                        for k in 2...5 where !isHex(p[i + k]) { return false }
                        i += 6
                    default: return false
                    }
                case 3:
                    return false
                default:
                    guard let length = utf8Length(at: i) else { return false }
                    i += length
                }
            }
            return false
        }
    }

    @inline(__always) func isHex(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x66)
    }

    /// The length of a well-formed UTF-8 sequence at `index` (Unicode Table 3-7), or `nil`.
    func utf8Length(at index: Int) -> Int? {
        let b0 = p[index]
        func continuation(_ k: Int, _ low: UInt8 = 0x80, _ high: UInt8 = 0xBF) -> Bool {
            index + k < n && p[index + k] >= low && p[index + k] <= high
        }
        switch b0 {
        case 0xC2...0xDF: return continuation(1) ? 2 : nil
        case 0xE0: return continuation(1, 0xA0) && continuation(2) ? 3 : nil
        case 0xE1...0xEC, 0xEE...0xEF: return continuation(1) && continuation(2) ? 3 : nil
        case 0xED: return continuation(1, 0x80, 0x9F) && continuation(2) ? 3 : nil
        case 0xF0: return continuation(1, 0x90) && continuation(2) && continuation(3) ? 4 : nil
        case 0xF1...0xF3: return continuation(1) && continuation(2) && continuation(3) ? 4 : nil
        case 0xF4: return continuation(1, 0x80, 0x8F) && continuation(2) && continuation(3) ? 4 : nil
        default: return nil
        }
    }

    @inline(__always) func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    mutating func scanNumber() -> Bool {
        if p[i] == 0x2D { i += 1 }
        guard i < n else { return false }
        if p[i] == 0x30 {
            i += 1
        } else if isDigit(p[i]) {
            while i < n, isDigit(p[i]) { i += 1 }
        } else {
            return false
        }
        if i < n, p[i] == 0x2E {
            i += 1
            guard i < n, isDigit(p[i]) else { return false }
            while i < n, isDigit(p[i]) { i += 1 }
        }
        if i < n, p[i] | 0x20 == 0x65 {
            i += 1
            if i < n, p[i] == 0x2B || p[i] == 0x2D { i += 1 }
            guard i < n, isDigit(p[i]) else { return false }
            while i < n, isDigit(p[i]) { i += 1 }
        }
        return true
    }

    mutating func scanLiteral(_ bytes: StaticString) -> Bool {
        let count = bytes.utf8CodeUnitCount
        guard i + count <= n else { return false }
        let literal = bytes.utf8Start
        for k in 0..<count where p[i + k] != literal[k] { return false }
        i += count
        return true
    }

    /// A scalar or the opening of a container at `i` (whitespace already skipped); `false` if invalid.
    @inline(__always) mutating func scanValueStart() -> Bool {
        guard i < n else { return false }
        switch p[i] {
        case 0x7B:
            stack.append(Scanner.objectBit)
            i += 1
            return true
        case 0x5B:
            stack.append(0)
            i += 1
            return true
        case 0x22: return scanString()
        case 0x74: return scanLiteral("true")
        case 0x66: return scanLiteral("false")
        case 0x6E: return scanLiteral("null")
        default: return scanNumber()
        }
    }

    mutating func run(into output: inout [UInt8]) -> NullStripper.Outcome {
        // A UTF-8 byte order mark is tolerated (RFC 8259 §8.1) and kept.
        if n >= 3, p[0] == 0xEF, p[1] == 0xBB, p[2] == 0xBF { i = 3 }
        skipWhitespace()
        guard scanValueStart() else { return .invalid(offset: i) }
        // The loop's position: right after `{` / `[` (a container opened), or after a complete value.
        var justOpened = !stack.isEmpty
        while !stack.isEmpty {
            let top = stack.count - 1
            let isObject = stack[top] & Scanner.objectBit != 0
            // Where the next member starts, and the comma before it (-1 when none).
            var comma = -1
            var memberStart = i
            if justOpened {
                skipWhitespace()
                guard i < n else { return .invalid(offset: i) }
                if p[i] == (isObject ? 0x7D : 0x5D) {
                    i += 1
                    stack.removeLast()
                    justOpened = false
                    continue
                }
            } else {
                skipWhitespace()
                guard i < n else { return .invalid(offset: i) }
                let c = p[i]
                if c == (isObject ? 0x7D : 0x5D) {
                    i += 1
                    stack.removeLast()
                    continue
                }
                guard c == 0x2C else { return .invalid(offset: i) }
                comma = i
                i += 1
                memberStart = i
                skipWhitespace()
            }
            justOpened = false
            // A member (object) or element (array) begins at `i`.
            var dropped = false
            while true {
                guard i < n else { return .invalid(offset: i) }
                if isObject {
                    guard p[i] == 0x22, scanString() else { return .invalid(offset: i) }
                    skipWhitespace()
                    guard i < n, p[i] == 0x3A else { return .invalid(offset: i) }
                    i += 1
                    skipWhitespace()
                } else if !dropArrayNulls {
                    break
                }
                guard isNullLiteral(at: i) else { break }
                let valueEnd = i + 4
                i = valueEnd
                skipWhitespace()
                guard i < n else { return .invalid(offset: i) }
                let next = p[i]
                let close: UInt8 = isObject ? 0x7D : 0x5D
                guard next == 0x2C || next == close else { return .invalid(offset: i) }
                if stack[top] & Scanner.keptBit != 0 {
                    // Not the first kept member: it owns the comma before it.
                    drop(from: comma, to: valueEnd, into: &output)
                } else if next == close {
                    drop(from: memberStart, to: valueEnd, into: &output)
                } else {
                    // First member so far: it owns the whitespace before it and the comma after it.
                    drop(from: memberStart, to: i + 1, into: &output)
                    i += 1
                    memberStart = i
                    comma = -1
                    skipWhitespace()
                    continue
                }
                i = valueEnd
                dropped = true
                break
            }
            // After a dropped member the loop goes on with the `,` or the close that follows it.
            if dropped { continue }
            stack[top] |= Scanner.keptBit
            guard scanValueStart() else { return .invalid(offset: i) }
            justOpened = stack.count > top + 1
        }
        skipWhitespace()
        guard i == n else { return .invalid(offset: i) }
        guard removed > 0 else { return .unchanged }
        if copied < n { output.append(contentsOf: UnsafeBufferPointer(start: p + copied, count: n - copied)) }
        return .stripped(removed: removed)
    }
}
