/// A strict JSON (RFC 8259) reader into ``Value``, for documents: exact numbers, member order
/// kept, duplicate keys refused, nesting bounded.
struct JSONReader {
    struct Failure: Error {
        var line: Int
        var message: String
        /// The text nests deeper than any document is read: no other reading of it helps.
        var isNesting = false
    }

    let bytes: [UInt8]
    let recordLines: Bool
    var index = 0
    var line = 1
    var lines: [String: Int] = [:]

    init(bytes: [UInt8], recordLines: Bool = false) {
        self.bytes = bytes
        self.recordLines = recordLines
    }

    /// One value and nothing after it but whitespace.
    mutating func document() throws(Failure) -> Value {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        skipSpace()
        let root = try value(pointer: "", depth: 0)
        skipSpace()
        guard index == bytes.count else { throw fail("text after the JSON value") }
        return root
    }

    private func fail(_ message: String) -> Failure { Failure(line: line, message: message) }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x0A:
                line += 1
                index += 1
            case 0x20, 0x09, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func value(pointer: String, depth: Int) throws(Failure) -> Value {
        guard index < bytes.count else { throw fail("the JSON text ends early") }
        guard depth < 512 else {
            var failure = fail("nested deeper than 512")
            failure.isNesting = true
            throw failure
        }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            if recordLines { lines[pointer] = line }
            index += 1
            skipSpace()
            var members: [(String, Value)] = []
            var seen = Set<String>()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    throw fail("expected a member name")
                }
                let key = try string()
                guard seen.insert(key).inserted else { throw fail("duplicate key \"\(key)\"") }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                skipSpace()
                members.append((key, try value(pointer: pointer + "/" + Value.escape(key), depth: depth + 1)))
                skipSpace()
                guard index < bytes.count else { throw fail("the JSON text ends early") }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                }
                guard bytes[index] == UInt8(ascii: ",") else { throw fail("expected ',' or '}'") }
                index += 1
                skipSpace()
            }
        case UInt8(ascii: "["):
            if recordLines { lines[pointer] = line }
            index += 1
            skipSpace()
            var items: [Value] = []
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                items.append(try value(pointer: pointer + "/\(items.count)", depth: depth + 1))
                skipSpace()
                guard index < bytes.count else { throw fail("the JSON text ends early") }
                if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(items)
                }
                guard bytes[index] == UInt8(ascii: ",") else { throw fail("expected ',' or ']'") }
                index += 1
                skipSpace()
            }
        case UInt8(ascii: "\""):
            // (A root member's scalar has a line of its own, as in YAML.)
            if recordLines, depth == 1 { lines[pointer] = line }
            return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default:
            let start = index
            while index < bytes.count, JSONGrammar.isNumberByte(bytes[index]) { index += 1 }
            guard JSONGrammar.isNumber(bytes[start..<index]), let number = Number(text: bytes[start..<index]) else {
                index = start
                throw fail("not a JSON value")
            }
            return .number(number)
        }
    }

    private mutating func literal(_ word: String, _ value: Value) throws(Failure) -> Value {
        let utf8 = Array(word.utf8)
        guard index + utf8.count <= bytes.count, bytes[index..<(index + utf8.count)].elementsEqual(utf8) else {
            throw fail("not a JSON value")
        }
        index += utf8.count
        return value
    }

    private mutating func string() throws(Failure) -> String {
        index += 1
        let start = index
        var plain = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                plain = false
                index += 2
                continue
            }
            guard byte >= 0x20 else { throw fail("a control character in a string") }
            index += 1
        }
        guard index < bytes.count else { throw fail("a string that does not end") }
        let raw = bytes[start..<index]
        index += 1
        guard let text = plain ? JSONGrammar.utf8String(raw) : JSONGrammar.unescape(raw) else {
            throw fail("a string with a bad escape or invalid UTF-8")
        }
        return text
    }
}
