/// Removes null-valued object members from JSON text (AFNetworking's `removesKeysWithNullValues`),
/// validating the whole document on the way (RFC 8259, strict: UTF-8, escapes, number grammar).
///
/// The output is the input minus the removed members and the separator and whitespace that belonged
/// to them; every other byte (key order, number text, string escapes, indentation) is kept. A member
/// owns its preceding comma, or, when no member of its object has been kept yet, the comma after it
/// and the whitespace after that comma (the whitespace before it goes to the member that takes its
/// place) — so `{"a": null, "b": 1}` becomes `{"b": 1}`, `{"a": 1, "b": null}` becomes `{"a": 1}`,
/// and an indented document keeps its indentation.
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
        var outcome = NullStripper.Outcome.invalid(offset: 0)
        let result = [UInt8](unsafeUninitializedCapacity: input.count) { buffer, initialized in
            (outcome, initialized) = strip(input, mode: mode, into: UnsafeMutableRawBufferPointer(buffer))
        }
        guard case .stripped = outcome else { return outcome }
        if output.isEmpty { output = result } else { output.append(contentsOf: result) }
        return outcome
    }

    /// Strips `input` into caller-owned memory, for callers that reuse one output buffer.
    /// - Parameters:
    ///   - input: The JSON text.
    ///   - output: Room for at least `input.count` bytes (the output is never longer than the input).
    /// - Returns: The outcome, and how many bytes of `output` were written (0 unless stripped).
    public static func strip(_ input: UnsafeRawBufferPointer, mode: Mode, into output: UnsafeMutableRawBufferPointer)
        -> (outcome: Outcome, written: Int)
    {
        precondition(output.count >= input.count, "the output must have room for the whole input")
        guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count > 0,
            let out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        else {
            return (.invalid(offset: 0), 0)
        }
        var scanner = Scanner(base: base, count: input.count, out: out, dropArrayNulls: mode == .all)
        let outcome = scanner.run()
        guard case .stripped = outcome else { return (outcome, 0) }
        return (outcome, scanner.written)
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
        let table = jsonStringClasses
        let dropArrayNulls = self.dropArrayNulls
        var i = 0
        /// Input before this offset has been copied to the output (or dropped).
        var copied = 0
        var written = 0
        var removed = 0
        // Whitespace at the end of the output kept for the member after a removed first one.
        var lead = 0
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
                // Where this member's own text starts (after the whitespace before it).
                let ownStart = i
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
                    // The container ends empty: the whitespace kept for a successor has none.
                    written -= lead
                    lead = 0
                    copied = valueEnd
                    removed += 1
                } else {
                    // First member so far: it owns the comma after it and the whitespace after
                    // that; the whitespace before it stays for the member that takes its place.
                    if ownStart > copied {
                        (out + written).update(from: p + copied, count: ownStart - copied)
                        written += ownStart - copied
                        lead = ownStart - max(memberStart, copied)
                    }
                    removed += 1
                    i = Lex.skipWhitespace(p, n, i &+ 1)
                    copied = i
                    memberStart = i
                    comma = -1
                    continue
                }
                i = valueEnd
                dropped = true
                break
            }
            // After a dropped member the loop goes on with the `,` or the close that follows it.
            if dropped { continue }
            current |= Scanner.keptBit
            lead = 0
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
