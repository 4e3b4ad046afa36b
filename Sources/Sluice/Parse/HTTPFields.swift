/// Ordered HTTP header fields with case-insensitive lookup (RFC 9110 §5).
public struct HTTPFields: Sendable, Equatable, Sequence {
    /// One field line.
    public struct Field: Sendable, Equatable {
        /// The name as received.
        public var name: String
        /// The value, without surrounding whitespace.
        public var value: String

        /// A field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }

        /// The name in lower case.
        public var key: String { name.lowercased() }

        /// Whether the name equals `other` ignoring ASCII case (no allocation).
        @inlinable
        public func hasName(_ other: String) -> Bool {
            let mine = name.utf8
            let theirs = other.utf8
            guard mine.count == theirs.count else { return false }
            // Contiguous bytes (native and small strings): compared through pointers.
            let fast = mine.withContiguousStorageIfAvailable { a in
                theirs.withContiguousStorageIfAvailable { b -> Bool in
                    for index in 0..<a.count {
                        let x = a[index]
                        let y = b[index]
                        if x != y, x | 0x20 != y | 0x20 || x | 0x20 &- 0x61 >= 26 { return false }
                    }
                    return true
                }
            }
            if let fast, let equal = fast { return equal }
            var iterator = theirs.makeIterator()
            for byte in mine {
                guard let otherByte = iterator.next() else { return false }
                if byte != otherByte, byte | 0x20 != otherByte | 0x20 || byte | 0x20 &- 0x61 >= 26 { return false }
            }
            return true
        }
    }

    /// The fields in order.
    public private(set) var fields: [Field] = []

    /// No fields.
    public init() {}

    /// No fields yet, with room for `capacity` (a head being parsed: no regrowth per line).
    public init(capacity: Int) { fields.reserveCapacity(capacity) }

    /// Fields from name/value pairs, in order.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// Number of field lines.
    public var count: Int { fields.count }

    /// Room for `count` fields without reallocating.
    public mutating func reserveCapacity(_ count: Int) { fields.reserveCapacity(count) }

    /// Appends a field line.
    public mutating func append(name: String, value: String) { fields.append(Field(name: name, value: value)) }

    /// The first value of `name`, or `nil`.
    public subscript(_ name: String) -> String? {
        return fields.first { $0.hasName(name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        var values: [String] = []
        for field in fields where field.hasName(name) { values.append(field.value) }
        return values
    }

    /// Whether `name` is present.
    public func contains(_ name: String) -> Bool {
        return fields.contains { $0.hasName(name) }
    }

    /// Every comma-separated element of every `name` line, trimmed and lower-cased (`Connection`, `Transfer-Encoding`).
    public func tokens(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }.map { $0.trimmingOWS().lowercased() }.filter { !$0.isEmpty }
    }

    /// Removes every line of `name`.
    public mutating func remove(_ name: String) {
        removeAll { $0.hasName(name) }
    }

    /// Removes every line for which `shouldRemove` is true. Fields shared with another copy are
    /// copied only when a line really goes.
    public mutating func removeAll(where shouldRemove: (Field) -> Bool) {
        guard fields.contains(where: shouldRemove) else { return }
        fields.removeAll(where: shouldRemove)
    }

    /// Removes every line whose name is one of `keys` (given in lower case).
    public mutating func remove(keys: [String]) {
        removeAll { field in keys.contains { field.hasName($0) } }
    }

    /// Replaces every line of `name` by one line with `value`.
    public mutating func set(_ name: String, _ value: String) {
        if let index = fields.firstIndex(where: { $0.hasName(name) }) {
            fields[index].value = value
            var position = fields.index(after: index)
            while position < fields.endIndex {
                if fields[position].hasName(name) { fields.remove(at: position) } else { position += 1 }
            }
        } else {
            append(name: name, value: value)
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's OWS).
    func trimmingOWS() -> String {
        let bytes = utf8
        var start = bytes.endIndex
        var end = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            let next = bytes.index(after: index)
            if byte != 0x20, byte != 0x09 {
                if start == bytes.endIndex { start = index }
                end = next
            }
            index = next
        }
        guard start < end else { return "" }
        if start == bytes.startIndex, end == bytes.endIndex { return String(self) }
        return String(self[start..<end])
    }

}
