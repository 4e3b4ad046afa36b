/// Indents JSON text for people (`sluice cache show --pretty`) without reading it into values:
/// keys stay in the order the origin sent them, and every string and number keeps its exact text
/// (escapes, exponent, trailing zeros). Only whitespace between tokens changes.
public enum JSONPrettyPrinter {
    /// `input` indented by `indent` spaces per level, `"key": value` with one space; `nil` when
    /// it is not valid JSON (RFC 8259).
    public static func format(_ input: [UInt8], indent: Int = 2) -> [UInt8]? {
        input.withUnsafeBufferPointer { buffer -> [UInt8]? in
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return nil }
            return format(base, buffer.count, indent: indent)
        }
    }

    /// What the printer expects next.
    private enum Expect {
        /// A value (the document, an array element, a member's value).
        case value
        /// A member's key (empty objects are printed whole when they open).
        case key
        /// `,` or the container's close.
        case commaOrClose
    }

    private static func format(_ p: UnsafePointer<UInt8>, _ n: Int, indent: Int) -> [UInt8]? {
        let table = jsonStringClasses
        var out: [UInt8] = []
        out.reserveCapacity(n + n / 4)
        var containers: [UInt8] = []  // the open brackets, innermost last
        var expect = Expect.value
        var i = Lex.skipWhitespace(p, n, 0)
        func newline(_ out: inout [UInt8], depth: Int) {
            out.append(0x0A)
            out.append(contentsOf: repeatElement(0x20, count: depth * indent))
        }
        while i < n {
            let c = p[i]
            switch expect {
            case .value, .key:
                if expect == .key, c != 0x22 { return nil }
                if expect == .value, c == 0x7B || c == 0x5B {
                    let close: UInt8 = c == 0x7B ? 0x7D : 0x5D
                    let next = Lex.skipWhitespace(p, n, i &+ 1)
                    guard next < n else { return nil }
                    out.append(c)
                    if p[next] == close {
                        out.append(close)
                        i = next &+ 1
                        expect = .commaOrClose
                        break
                    }
                    containers.append(c)
                    newline(&out, depth: containers.count)
                    i = next
                    expect = c == 0x7B ? .key : .value
                    continue
                }
                let end = Lex.scalar(p, n, i, table)
                guard end > i else { return nil }
                out.append(contentsOf: UnsafeBufferPointer(start: p + i, count: end &- i))
                i = Lex.skipWhitespace(p, n, end)
                if expect != .value {
                    guard i < n, p[i] == 0x3A else { return nil }
                    out.append(contentsOf: [0x3A, 0x20])
                    i = Lex.skipWhitespace(p, n, i &+ 1)
                    guard i < n else { return nil }
                    expect = .value
                    continue
                }
                expect = .commaOrClose
                continue
            case .commaOrClose:
                guard let open = containers.last else { return nil }
                if c == 0x2C {
                    out.append(0x2C)
                    newline(&out, depth: containers.count)
                    i = Lex.skipWhitespace(p, n, i &+ 1)
                    expect = open == 0x7B ? .key : .value
                    continue
                }
                guard c == (open == 0x7B ? 0x7D : 0x5D) else { return nil }
                containers.removeLast()
                newline(&out, depth: containers.count)
                out.append(c)
                i &+= 1
            }
            i = Lex.skipWhitespace(p, n, i)
        }
        guard containers.isEmpty, expect == .commaOrClose else { return nil }
        return out
    }
}
