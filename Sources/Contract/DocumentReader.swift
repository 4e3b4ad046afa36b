import Yams

/// A contract file read whole: its root value and, for messages, the line where each object or
/// array starts (keyed by JSON Pointer).
public struct SourceDocument: Sendable {
    /// The file's absolute URI (`file:///…`, or the `http(s)://` URI it stands for).
    public let uri: String
    public let root: Value
    public let lines: [String: Int]

    public init(uri: String, root: Value, lines: [String: Int] = [:]) {
        self.uri = uri
        self.root = root
        self.lines = lines
    }

    /// The line of the nearest object or array at or above `pointer`.
    public func line(of pointer: String) -> Int? {
        var pointer = pointer
        while true {
            if let line = lines[pointer] { return line }
            guard let slash = pointer.lastIndex(of: "/") else { return nil }
            pointer = String(pointer[..<slash])
        }
    }

    /// Reads JSON or YAML text (JSON first when it looks like JSON: exact numbers, faster).
    public static func read(text: String, uri: String) throws(ContractError) -> SourceDocument {
        let firstByte = text.utf8.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        if firstByte == UInt8(ascii: "{") || firstByte == UInt8(ascii: "[") {
            var reader = JSONReader(bytes: Array(text.utf8), recordLines: true)
            do throws(JSONReader.Failure) {
                let root = try reader.document()
                return SourceDocument(uri: uri, root: root, lines: reader.lines)
            } catch {
                // JSON-looking YAML (flow style with comments, say) still gets a chance.
                if let yaml = try? readYAML(text: text, uri: uri) { return yaml }
                throw ContractError(file: uri, line: error.line, pointer: nil, message: error.message)
            }
        }
        return try readYAML(text: text, uri: uri)
    }

    private static func readYAML(text: String, uri: String) throws(ContractError) -> SourceDocument {
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw ContractError(
                file: uri, line: YAMLBridge.line(of: error), pointer: nil, message: "not YAML: \(error)")
        } catch {
            throw ContractError(file: uri, line: nil, pointer: nil, message: "not YAML: \(error)")
        }
        guard let node else { throw ContractError(file: uri, line: nil, pointer: nil, message: "the file is empty") }
        var bridge = YAMLBridge(uri: uri)
        let root = try bridge.value(node, pointer: "", depth: 0)
        return SourceDocument(uri: uri, root: root, lines: bridge.lines)
    }
}

/// Yams nodes to values, with lines.
private struct YAMLBridge {
    let uri: String
    var lines: [String: Int] = [:]

    init(uri: String) { self.uri = uri }

    static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
            return mark.line
        default: return nil
        }
    }

    mutating func value(_ node: Node, pointer: String, depth: Int) throws(ContractError) -> Value {
        guard depth < 512 else {
            throw ContractError(file: uri, line: node.mark?.line, pointer: pointer, message: "nested deeper than 512")
        }
        switch node {
        case .scalar(let scalar):
            switch node.tag.description {
            case Tag.Name.null.rawValue: return .null
            case Tag.Name.bool.rawValue:
                return .bool(Bool(scalar.string.lowercased() == "true" || scalar.string.lowercased() == "yes"))
            case Tag.Name.int.rawValue, Tag.Name.float.rawValue:
                let text = scalar.string.replacingOccurrences("_", "")
                if let number = Number(text: Array(text.utf8)) { return .number(number) }
                if let integer = Int(text) { return .number(Number(integer)) }
                return .string(scalar.string)
            default: return .string(scalar.string)
            }
        case .sequence(let sequence):
            if let line = node.mark?.line { lines[pointer] = line }
            var items: [Value] = []
            items.reserveCapacity(sequence.count)
            for (index, item) in sequence.enumerated() {
                items.append(try value(item, pointer: pointer + "/\(index)", depth: depth + 1))
            }
            return .array(items)
        case .mapping(let mapping):
            if let line = node.mark?.line { lines[pointer] = line }
            var members: [(String, Value)] = []
            members.reserveCapacity(mapping.count)
            var seen = Set<String>()
            for (keyNode, valueNode) in mapping {
                guard case .scalar(let keyScalar) = keyNode else {
                    throw ContractError(
                        file: uri, line: keyNode.mark?.line, pointer: pointer,
                        message: "a mapping key that is not a scalar")
                }
                let key = keyScalar.string
                guard seen.insert(key).inserted else {
                    throw ContractError(
                        file: uri, line: keyNode.mark?.line, pointer: pointer + "/" + Value.escape(key),
                        message: "duplicate key \"\(key)\"")
                }
                members.append(
                    (key, try value(valueNode, pointer: pointer + "/" + Value.escape(key), depth: depth + 1)))
            }
            return .object(members)
        }
    }
}

/// A strict JSON (RFC 8259) reader into ``Value``, for documents: exact numbers, member order
/// kept, duplicate keys refused, nesting bounded.
struct JSONReader {
    struct Failure: Error {
        var line: Int
        var message: String
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
        guard depth < 512 else { throw fail("nested deeper than 512") }
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

/// JSON's lexical rules, shared by the document reader and the streaming tokenizer.
enum JSONGrammar {
    @inline(__always) static func isNumberByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x2B || byte == 0x2E || byte | 0x20 == 0x65
    }

    /// RFC 8259's number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isNumber<Bytes: Collection>(_ text: Bytes) -> Bool where Bytes.Element == UInt8 {
        var iterator = text.makeIterator()
        var byte = iterator.next()
        if byte == 0x2D { byte = iterator.next() }
        guard let first = byte, first >= 0x30 && first <= 0x39 else { return false }
        byte = iterator.next()
        if first != 0x30 {
            while let digit = byte, digit >= 0x30 && digit <= 0x39 { byte = iterator.next() }
        }
        if byte == 0x2E {
            byte = iterator.next()
            guard let digit = byte, digit >= 0x30 && digit <= 0x39 else { return false }
            while let digit = byte, digit >= 0x30 && digit <= 0x39 { byte = iterator.next() }
        }
        if let e = byte, e | 0x20 == 0x65 {
            byte = iterator.next()
            if byte == 0x2B || byte == 0x2D { byte = iterator.next() }
            guard let digit = byte, digit >= 0x30 && digit <= 0x39 else { return false }
            while let digit = byte, digit >= 0x30 && digit <= 0x39 { byte = iterator.next() }
        }
        return byte == nil
    }

    /// The text of plain string bytes, when they are valid UTF-8.
    static func utf8String<Bytes: Collection>(_ raw: Bytes) -> String? where Bytes.Element == UInt8 {
        guard isValidUTF8(raw) else { return nil }
        return String(decoding: raw, as: UTF8.self)
    }

    /// Strict UTF-8 (no overlongs, no surrogates, nothing past U+10FFFF).
    static func isValidUTF8<Bytes: Collection>(_ raw: Bytes) -> Bool where Bytes.Element == UInt8 {
        if let answer = raw.withContiguousStorageIfAvailable({
            isValidUTF8($0.baseAddress ?? UnsafePointer(bitPattern: 1)!, $0.count)
        }) {
            return answer
        }
        let bytes = Array(raw)
        return bytes.withUnsafeBufferPointer { isValidUTF8($0.baseAddress ?? UnsafePointer(bitPattern: 1)!, $0.count) }
    }

    /// The text of string bytes with escapes (`\n`, `\u00e9`, surrogate pairs); `nil` on a bad
    /// escape, a lone surrogate or invalid UTF-8.
    static func unescape<Bytes: Collection>(_ raw: Bytes) -> String? where Bytes.Element == UInt8, Bytes.Index == Int {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        guard unescape(raw, into: &out) else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    /// Unescapes into `out` (appending); `false` on a bad escape, a lone surrogate or invalid UTF-8.
    static func unescape<Bytes: Collection>(_ raw: Bytes, into out: inout [UInt8]) -> Bool
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var index = raw.startIndex
        let end = raw.endIndex
        let runStart = out.count
        while index < end {
            let byte = raw[index]
            guard byte == 0x5C else {
                out.append(byte)
                index += 1
                continue
            }
            guard index + 1 < end else { return false }
            let escaped = raw[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(raw, index) else { return false }
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 6 <= end, raw[index] == 0x5C, raw[index + 1] == UInt8(ascii: "u"),
                        let low = hex4(raw, index + 2), (0xDC00...0xDFFF).contains(low)
                    else { return false }
                    index += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    return false
                }
                guard let unicode = Unicode.Scalar(scalar) else { return false }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
            default: return false
            }
        }
        return isValidUTF8(out[runStart...])
    }

    /// Unescapes `count` bytes of string content into `out` (room for `count` bytes: escapes only
    /// shrink); the decoded length, or `nil` on a bad escape or a lone surrogate. Runs between
    /// backslashes are copied whole.
    static func unescape(_ p: UnsafePointer<UInt8>, _ count: Int, into out: UnsafeMutablePointer<UInt8>) -> Int? {
        var i = 0
        var o = 0
        while i < count {
            var run = i
            while run < count, p[run] != 0x5C { run += 1 }
            if run > i {
                (out + o).update(from: p + i, count: run - i)
                o += run - i
                i = run
            }
            guard i < count else { break }
            guard i + 1 < count else { return nil }
            let escaped = p[i + 1]
            i += 2
            switch escaped {
            case 0x22, 0x5C, 0x2F: out[o] = escaped
            case UInt8(ascii: "b"): out[o] = 0x08
            case UInt8(ascii: "f"): out[o] = 0x0C
            case UInt8(ascii: "n"): out[o] = 0x0A
            case UInt8(ascii: "r"): out[o] = 0x0D
            case UInt8(ascii: "t"): out[o] = 0x09
            case UInt8(ascii: "u"):
                guard var scalar = hex4(UnsafeBufferPointer(start: p, count: count), i) else { return nil }
                i += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 6 <= count, p[i] == 0x5C, p[i + 1] == UInt8(ascii: "u"),
                        let low = hex4(UnsafeBufferPointer(start: p, count: count), i + 2),
                        (0xDC00...0xDFFF).contains(low)
                    else { return nil }
                    i += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    return nil
                }
                // UTF-8 of the scalar: never longer than the escape it replaces.
                if scalar < 0x80 {
                    out[o] = UInt8(scalar)
                } else if scalar < 0x800 {
                    out[o] = UInt8(0xC0 | (scalar >> 6))
                    out[o + 1] = UInt8(0x80 | (scalar & 0x3F))
                    o += 1
                } else if scalar < 0x10000 {
                    out[o] = UInt8(0xE0 | (scalar >> 12))
                    out[o + 1] = UInt8(0x80 | ((scalar >> 6) & 0x3F))
                    out[o + 2] = UInt8(0x80 | (scalar & 0x3F))
                    o += 2
                } else {
                    out[o] = UInt8(0xF0 | (scalar >> 18))
                    out[o + 1] = UInt8(0x80 | ((scalar >> 12) & 0x3F))
                    out[o + 2] = UInt8(0x80 | ((scalar >> 6) & 0x3F))
                    out[o + 3] = UInt8(0x80 | (scalar & 0x3F))
                    o += 3
                }
            default: return nil
            }
            o += 1
        }
        return o
    }

    static func isASCII(_ p: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        var i = 0
        var acc: UInt64 = 0
        while i + 8 <= count {
            acc |= UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)
            i += 8
        }
        var tail: UInt8 = 0
        while i < count {
            tail |= p[i]
            i += 1
        }
        return acc & 0x8080_8080_8080_8080 == 0 && tail < 0x80
    }

    /// Strict UTF-8 over memory, ASCII eight bytes at a time.
    static func isValidUTF8(_ p: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        var i = 0
        while i < count {
            if i + 8 <= count, UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i += 8
                continue
            }
            let lead = p[i]
            if lead < 0x80 {
                i += 1
                continue
            }
            let length: Int
            var minimum: UInt32
            var scalar: UInt32
            switch lead {
            case 0xC2...0xDF:
                length = 1
                minimum = 0x80
                scalar = UInt32(lead & 0x1F)
            case 0xE0...0xEF:
                length = 2
                minimum = 0x800
                scalar = UInt32(lead & 0x0F)
            case 0xF0...0xF4:
                length = 3
                minimum = 0x10000
                scalar = UInt32(lead & 0x07)
            default: return false
            }
            for k in 1...length {
                guard i + k < count else { return false }
                let next = p[i + k]
                guard next & 0xC0 == 0x80 else { return false }
                scalar = scalar << 6 | UInt32(next & 0x3F)
            }
            guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else { return false }
            i += length + 1
        }
        return true
    }

    private static func hex4<Bytes: Collection>(_ raw: Bytes, _ index: Int) -> UInt32?
    where Bytes.Element == UInt8, Bytes.Index == Int {
        guard index + 4 <= raw.endIndex else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = raw[index + offset]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: return nil
            }
            value = value << 4 | digit
        }
        return value
    }
}

/// A contract that cannot be loaded or understood: where, and why.
public struct ContractError: Error, CustomStringConvertible, Sendable {
    public var file: String
    public var line: Int?
    public var pointer: String?
    public var message: String

    public init(file: String, line: Int?, pointer: String?, message: String) {
        self.file = file
        self.line = line
        self.pointer = pointer
        self.message = message
    }

    public var description: String {
        var place = file.hasPrefix("file://") ? String(file.dropFirst(7)) : file
        if let line { place += ":\(line)" }
        if let pointer { place += " #" + (pointer.isEmpty ? "/" : pointer) }
        return place + ": " + message
    }
}
