/// The paths of the nulls null stripping removes from a JSON document (`$.user.middle_name`,
/// `$.items[3]`), for people looking at what stripping changed. Not on the stripping path: it
/// runs only when someone watches (the admin page), on the held document, and stops at `limit`.
enum NullPaths {
    /// Paths in document order; `[]` when nothing would be removed or the text is not JSON.
    static func list(_ json: [UInt8], mode: NullStripper.Mode, limit: Int = 100) -> [String] {
        var walker = Walker(bytes: json, mode: mode, limit: limit)
        walker.skipSpace()
        guard walker.value(path: "$") else { return [] }
        return walker.found
    }

    private struct Walker {
        let bytes: [UInt8]
        let mode: NullStripper.Mode
        let limit: Int
        var index = 0
        var found: [String] = []
        /// Containers deep, bounded like the stripper's own stack would be by memory: a hostile
        /// document must not exhaust the call stack.
        var depth = 0
        static let maxDepth = 512

        init(bytes: [UInt8], mode: NullStripper.Mode, limit: Int) {
            self.bytes = bytes
            self.mode = mode
            self.limit = limit
        }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        /// One value at `path`; `false` when the text is not JSON (or too deep).
        mutating func value(path: String) -> Bool {
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "{"): return object(path: path)
            case UInt8(ascii: "["): return array(path: path)
            case UInt8(ascii: "\""): return string() != nil
            default:
                // A literal or a number: up to the next delimiter.
                let start = index
                while index < bytes.count, ![0x2C, 0x7D, 0x5D, 0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) {
                    index += 1
                }
                return index > start
            }
        }

        private func isNull(at position: Int) -> Bool {
            position + 4 <= bytes.count && bytes[position..<(position + 4)].elementsEqual("null".utf8)
                && (position + 4 == bytes.count
                    || [0x2C, 0x7D, 0x5D, 0x20, 0x09, 0x0A, 0x0D].contains(bytes[position + 4]))
        }

        private mutating func object(path: String) -> Bool {
            depth += 1
            defer { depth -= 1 }
            guard depth <= Walker.maxDepth else { return false }
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return true
            }
            while index < bytes.count {
                guard bytes[index] == UInt8(ascii: "\""), let name = string() else { return false }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return false }
                index += 1
                skipSpace()
                let member = Walker.member(path, name)
                if isNull(at: index), found.count < limit { found.append(member) }
                guard value(path: member) else { return false }
                skipSpace()
                guard index < bytes.count else { return false }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return true
                }
                guard bytes[index] == UInt8(ascii: ",") else { return false }
                index += 1
                skipSpace()
            }
            return false
        }

        private mutating func array(path: String) -> Bool {
            depth += 1
            defer { depth -= 1 }
            guard depth <= Walker.maxDepth else { return false }
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return true
            }
            var position = 0
            while index < bytes.count {
                let element = path + "[\(position)]"
                if mode == .all, isNull(at: index), found.count < limit { found.append(element) }
                guard value(path: element) else { return false }
                skipSpace()
                guard index < bytes.count else { return false }
                if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return true
                }
                guard bytes[index] == UInt8(ascii: ",") else { return false }
                index += 1
                skipSpace()
                position += 1
            }
            return false
        }

        /// A string's text (escapes kept as written, which is enough for a path), past its quote.
        private mutating func string() -> String? {
            let start = index + 1
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""):
                    let text = String(decoding: bytes[start..<index], as: UTF8.self)
                    index += 1
                    return text
                default: index += 1
                }
            }
            return nil
        }

        /// `$.name`, or `$["odd name"]` when the name is not an identifier.
        static func member(_ path: String, _ name: String) -> String {
            let plain =
                !name.isEmpty
                && name.utf8.allSatisfy {
                    ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x5F
                }
            return plain ? path + "." + name : path + "[\"" + name + "\"]"
        }
    }
}
