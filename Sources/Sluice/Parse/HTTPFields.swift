/// Ordered HTTP header fields with case-insensitive lookup (RFC 9110 §5).
public struct HTTPFields: Sendable, Equatable, Sequence {
    /// One field line.
    public struct Field: Sendable, Equatable {
        /// The name as received.
        public var name: String
        /// The value, without surrounding whitespace.
        public var value: String
        /// The name in lower case, for comparisons.
        public let key: String

        /// A field; `key` is derived from `name`.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
            key = name.lowercased()
        }
    }

    /// The fields in order.
    public private(set) var fields: [Field] = []

    /// No fields.
    public init() {}

    /// Fields from name/value pairs, in order.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// Number of field lines.
    public var count: Int { fields.count }

    /// Appends a field line.
    public mutating func append(name: String, value: String) { fields.append(Field(name: name, value: value)) }

    /// The first value of `name`, or `nil`.
    public subscript(_ name: String) -> String? {
        let key = name.lowercased()
        return fields.first { $0.key == key }?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        let key = name.lowercased()
        return fields.filter { $0.key == key }.map(\.value)
    }

    /// Whether `name` is present.
    public func contains(_ name: String) -> Bool {
        let key = name.lowercased()
        return fields.contains { $0.key == key }
    }

    /// Every comma-separated element of every `name` line, trimmed and lower-cased (`Connection`, `Transfer-Encoding`).
    public func tokens(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }.map { $0.trimmingOWS().lowercased() }.filter { !$0.isEmpty }
    }

    /// Removes every line of `name`.
    public mutating func remove(_ name: String) {
        let key = name.lowercased()
        fields.removeAll { $0.key == key }
    }

    /// Removes every line whose lower-cased name is in `keys`.
    public mutating func remove(keys: Set<String>) {
        fields.removeAll { keys.contains($0.key) }
    }

    /// Replaces every line of `name` by one line with `value`.
    public mutating func set(_ name: String, _ value: String) {
        let key = name.lowercased()
        if let index = fields.firstIndex(where: { $0.key == key }) {
            fields[index].value = value
            var position = fields.index(after: index)
            while position < fields.endIndex {
                if fields[position].key == key { fields.remove(at: position) } else { position += 1 }
            }
        } else {
            append(name: name, value: value)
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's OWS).
    func trimmingOWS() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
