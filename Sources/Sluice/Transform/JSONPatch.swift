import Contract

/// RFC 6902 JSON Patch applied to JSON text in place: each operation finds the bytes of the
/// values it names (RFC 6901 pointers) and splices there, so everything outside the patched
/// values — spacing, member order, number spellings, escapes — stays byte for byte as the origin
/// wrote it. Operations apply in order; if one fails (a missing path, a failed `test`) the whole
/// patch is not applied (§5).
public struct JSONPatch: Sendable, Equatable {
    public enum Operation: Sendable, Equatable {
        case add(path: String, value: Literal)
        case remove(path: String)
        case replace(path: String, value: Literal)
        case move(from: String, path: String)
        case copy(from: String, path: String)
        case test(path: String, value: Literal)
    }

    /// A value an operation writes or tests: the value, and the JSON text written for it (numbers
    /// as the configuration spelled them).
    public struct Literal: Sendable, Equatable {
        public let value: Value
        public let text: [UInt8]

        public init(_ value: Value, text: String? = nil) {
            self.value = value
            self.text = Array((text ?? value.json).utf8)
        }
    }

    public let operations: [Operation]

    public init(_ operations: [Operation]) { self.operations = operations }

    /// Why a patch was not applied.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// The operation's index, and what went wrong.
        public let index: Int
        public let message: String
        public var description: String { "operation \(index): \(message)" }
    }

    /// The patched text, or why it was not patched (`text` must be one JSON value).
    public func apply(to text: [UInt8]) -> Result<[UInt8], Failure> {
        var bytes = text
        for (index, operation) in operations.enumerated() {
            do throws(JSONSpans.Failure) {
                bytes = try JSONPatch.apply(operation, to: bytes)
            } catch {
                return .failure(Failure(index: index, message: error.message))
            }
        }
        return .success(bytes)
    }

    private static func apply(_ operation: Operation, to bytes: [UInt8]) throws(JSONSpans.Failure) -> [UInt8] {
        let text = JSONSpans(bytes: bytes)
        switch operation {
        case .add(let path, let value): return try text.adding(value.text, at: path)
        case .remove(let path): return try text.removing(path)
        case .replace(let path, let value):
            let span = try text.locate(path).value
            return text.splicing(span, with: value.text)
        case .move(let from, let path):
            if from == path { return bytes }
            if path.hasPrefix(from + "/") { throw JSONSpans.Failure("cannot move \(from) into itself (\(path))") }
            let moved = Array(bytes[try text.locate(from).value])
            return try JSONSpans(bytes: text.removing(from)).adding(moved, at: path)
        case .copy(let from, let path):
            return try text.adding(Array(bytes[try text.locate(from).value]), at: path)
        case .test(let path, let expected):
            let span = try text.locate(path).value
            guard let actual = try? Value.parse(Array(bytes[span])), actual == expected.value else {
                throw JSONSpans.Failure("test failed: \(path) is not \(String(decoding: expected.text, as: UTF8.self))")
            }
            return bytes
        }
    }
}

/// The byte spans of the values in one JSON text, found by pointer.
struct JSONSpans {
    struct Failure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    let bytes: [UInt8]

    /// Where a pointer's value is, and, for a member or an element, its place in its container.
    struct Location {
        /// The value's bytes.
        let value: Range<Int>
        /// The whole member (`"key": value`) or element, when there is a container.
        let entry: Range<Int>?
        /// The container's bytes (`{…}` or `[…]`).
        let container: Range<Int>?
    }

    /// Each entry of a container: its whole range, its key (objects), its value.
    struct Entry {
        let range: Range<Int>
        let key: String?
        let value: Range<Int>
    }

    // MARK: - Finding

    func locate(_ pointer: String) throws(Failure) -> Location {
        guard pointer.isEmpty || pointer.hasPrefix("/") else { throw Failure("\(pointer) is not a JSON Pointer") }
        var index = skipSpace(0)
        let root = index..<(try end(of: index, depth: 0))
        guard skipSpace(root.upperBound) == bytes.count else { throw Failure("the body is not one JSON value") }
        var location = Location(value: root, entry: nil, container: nil)
        var walked = ""
        for token in Value.tokens(of: pointer) {
            let container = location.value
            let entries = try self.entries(of: container)
            let chosen: Entry?
            switch bytes[container.lowerBound] {
            case UInt8(ascii: "{"): chosen = entries.last { $0.key == token }
            default:
                guard let position = JSONSpans.arrayIndex(token) else {
                    throw Failure("\(walked)/\(token): \(token) is not an array index")
                }
                chosen = position < entries.count ? entries[position] : nil
            }
            walked += "/" + Value.escape(token)
            guard let chosen else { throw Failure("\(walked) does not exist") }
            location = Location(value: chosen.value, entry: chosen.range, container: container)
            index = chosen.value.lowerBound
        }
        return location
    }

    /// An RFC 6901 array index: `0` or digits without a leading zero.
    static func arrayIndex(_ token: String) -> Int? {
        guard !token.isEmpty, token.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            token == "0" || !token.hasPrefix("0")
        else { return nil }
        return Int(token)
    }

    /// The members or elements of the object or array at `range`.
    func entries(of range: Range<Int>) throws(Failure) -> [Entry] {
        let open = bytes[range.lowerBound]
        guard open == UInt8(ascii: "{") || open == UInt8(ascii: "[") else {
            throw Failure("a path goes through a value that is neither an object nor an array")
        }
        let isObject = open == UInt8(ascii: "{")
        var entries: [Entry] = []
        var index = skipSpace(range.lowerBound + 1)
        if index < range.upperBound - 1 {
            while true {
                let start = index
                var key: String?
                if isObject {
                    let keyEnd = try end(of: index, depth: 1)
                    guard let name = try? Value.parse(Array(bytes[index..<keyEnd])), let text = name.string else {
                        throw Failure("a member name is not a string")
                    }
                    key = text
                    index = skipSpace(keyEnd)
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                        throw Failure("a ':' is missing")
                    }
                    index = skipSpace(index + 1)
                }
                let valueEnd = try end(of: index, depth: 1)
                entries.append(Entry(range: start..<valueEnd, key: key, value: index..<valueEnd))
                index = skipSpace(valueEnd)
                guard index < bytes.count else { throw Failure("the body ends inside a container") }
                if bytes[index] == UInt8(ascii: ",") {
                    index = skipSpace(index + 1)
                    continue
                }
                break
            }
        }
        guard index == range.upperBound - 1 else { throw Failure("the body is not valid JSON") }
        return entries
    }

    func skipSpace(_ start: Int) -> Int {
        var index = start
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index
    }

    /// The end of the value starting at `start` (validated as far as its extent needs).
    func end(of start: Int, depth: Int) throws(Failure) -> Int {
        guard depth < 512 else { throw Failure("the body nests too deep") }
        guard start < bytes.count else { throw Failure("a value is missing") }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            var index = start + 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""): return index + 1
                default: index += 1
                }
            }
            throw Failure("a string is not closed")
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let close: UInt8 = bytes[start] == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            var index = skipSpace(start + 1)
            if index < bytes.count, bytes[index] == close { return index + 1 }
            while true {
                if close == UInt8(ascii: "}") {
                    index = skipSpace(try end(of: index, depth: depth + 1))
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                        throw Failure("a ':' is missing")
                    }
                    index = skipSpace(index + 1)
                }
                index = skipSpace(try end(of: index, depth: depth + 1))
                guard index < bytes.count else { throw Failure("the body ends inside a container") }
                if bytes[index] == close { return index + 1 }
                guard bytes[index] == UInt8(ascii: ",") else { throw Failure("a ',' is missing") }
                index = skipSpace(index + 1)
            }
        default:
            var index = start
            while index < bytes.count, !JSONSpans.isDelimiter(bytes[index]) { index += 1 }
            guard index > start else { throw Failure("a value is missing") }
            return index
        }
    }

    static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ":"): true
        default: false
        }
    }

    // MARK: - Changing

    func splicing(_ range: Range<Int>, with replacement: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count - range.count + replacement.count)
        out += bytes[..<range.lowerBound]
        out += replacement
        out += bytes[range.upperBound...]
        return out
    }

    /// Removes a member or element with one of the commas beside it.
    func removing(_ pointer: String) throws(Failure) -> [UInt8] {
        let location = try locate(pointer)
        guard let entry = location.entry, let container = location.container else {
            throw Failure("the whole document cannot be removed")
        }
        let entries = try self.entries(of: container)
        guard let position = entries.firstIndex(where: { $0.range == entry }) else { throw Failure("\(pointer) moved") }
        if position + 1 < entries.count {
            // Up to the next entry: the comma after it goes too.
            return splicing(entry.lowerBound..<entries[position + 1].range.lowerBound, with: [])
        }
        if position > 0 {
            // The last one: from the end of the previous entry (its comma goes).
            return splicing(entries[position - 1].range.upperBound..<entry.upperBound, with: [])
        }
        return splicing(entry, with: [])
    }

    /// Adds (or, for an existing member, replaces) the value at `pointer` (`-` appends to an array).
    func adding(_ value: [UInt8], at pointer: String) throws(Failure) -> [UInt8] {
        if pointer.isEmpty { return value }
        guard let slash = pointer.lastIndex(of: "/") else { throw Failure("\(pointer) is not a JSON Pointer") }
        let parentPointer = String(pointer[..<slash])
        let token = Value.tokens(of: "/" + pointer[pointer.index(after: slash)...])[0]
        let parent = try locate(parentPointer).value
        let entries = try self.entries(of: parent)
        if bytes[parent.lowerBound] == UInt8(ascii: "{") {
            if let existing = entries.last(where: { $0.key == token }) { return splicing(existing.value, with: value) }
            let member = Array(Value.quoted(token).utf8) + [UInt8(ascii: ":")] + value
            guard let last = entries.last else {
                return splicing((parent.lowerBound + 1)..<(parent.upperBound - 1), with: member)
            }
            return splicing(last.range.upperBound..<last.range.upperBound, with: [UInt8(ascii: ",")] + member)
        }
        let position: Int
        if token == "-" {
            position = entries.count
        } else {
            guard let index = JSONSpans.arrayIndex(token), index <= entries.count else {
                throw Failure("\(pointer): index \(token) is past the end of the array (\(entries.count) elements)")
            }
            position = index
        }
        if position < entries.count {
            let at = entries[position].range.lowerBound
            return splicing(at..<at, with: value + [UInt8(ascii: ",")])
        }
        guard let last = entries.last else {
            return splicing((parent.lowerBound + 1)..<(parent.upperBound - 1), with: value)
        }
        return splicing(last.range.upperBound..<last.range.upperBound, with: [UInt8(ascii: ",")] + value)
    }
}
