import Foundation

/// Ordered HTTP header fields with case-insensitive lookup (RFC 9110 §5).
public struct HTTPFields: Sendable, Equatable, Sequence {
    /// One field line.
    public struct Field: Sendable, Equatable {
        /// The name as received.
        public let name: String
        /// The value, without surrounding whitespace. Setting it makes the line ``opaque`` no more.
        public var value: String { didSet { opaque = false } }
        /// The name's ``FieldCode`` (``FieldCode/other`` for the names not listed there).
        public let code: FieldCode
        /// Whether the value arrived as bytes that are not UTF-8 (obs-text, RFC 9110 §5.5):
        /// ``value`` then holds each byte as one ISO-8859-1 character, and heads are written with
        /// those bytes again (``wireBytes``), so a proxy passes them on as it received them.
        public private(set) var opaque = false

        /// A field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
            self.code = FieldCode(name)
        }

        /// A field whose name's code is known (a parser classified the bytes).
        init(name: String, value: String, code: FieldCode, opaque: Bool = false) {
            self.name = name
            self.value = value
            self.code = code
            self.opaque = opaque
        }

        /// A value's text from its bytes as received: UTF-8 when they are, else one ISO-8859-1
        /// character per byte (`opaque`: written back byte for byte).
        static func wireText(_ bytes: UnsafeRawBufferPointer) -> (text: String, opaque: Bool) {
            let text = String(decoding: bytes, as: UTF8.self)
            // Decoding repairs what is not UTF-8: the same bytes back mean there was nothing to
            // repair. (`String(validating:)` is not specialised: a generic call per value.)
            if ByteScan.isASCII(bytes) || text.utf8.elementsEqual(bytes) { return (text, false) }
            return (String(decoding: bytes.map { UInt16($0) }, as: UTF16.self), true)
        }

        /// The bytes of `text` as ``wireText(_:)`` read them when `opaque` (each character one
        /// byte), else its UTF-8.
        static func wireBytes(_ text: String, opaque: Bool) -> [UInt8] {
            opaque ? text.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) } : Array(text.utf8)
        }

        /// The name in lower case.
        public var key: String { name.lowercased() }

        /// `field`'s value as ``HTTPFields/comparable(_:)`` gives it.
        static func comparable(_ field: Field) -> String {
            guard field.opaque else { return field.value }
            var text = String.UnicodeScalarView()
            for scalar in field.value.unicodeScalars {
                text.append(scalar.value < 0x80 ? scalar : Unicode.Scalar(0x10FF00 + scalar.value)!)
            }
            return String(text)
        }

        /// Whether two texts are the same bytes (not only canonically equivalent Unicode).
        static func sameBytes(_ one: some StringProtocol, _ other: some StringProtocol) -> Bool {
            one.utf8.elementsEqual(other.utf8)
        }

        /// ``sameBytes(_:_:)`` for two Strings, through their contiguous bytes (every lookup of
        /// a hit compares variants, most of them empty).
        static func sameBytes(_ one: String, _ other: String) -> Bool {
            var one = one
            var other = other
            return one.withUTF8 { a in
                other.withUTF8 { b in
                    a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
                }
            }
        }

        /// Whether this line's name is `code`'s.
        @inlinable
        public func `is`(_ code: FieldCode) -> Bool { self.code == code }

        /// Whether the name equals `other` ignoring ASCII case (no allocation).
        public func hasName(_ other: String) -> Bool {
            if code != .other { return code == FieldCode(other) }
            return Self.equalIgnoringCase(name, other)
        }

        /// Whether the name equals `other` (whose code is `otherCode`) ignoring ASCII case.
        @inline(__always)
        func hasName(_ other: String, code otherCode: FieldCode) -> Bool {
            code == otherCode && (otherCode != .other || Self.equalIgnoringCase(name, other))
        }

        static func equalIgnoringCase(_ one: String, _ other: String) -> Bool {
            let mine = one.utf8
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
    /// The codes of the lines present (``FieldCode/bit``): a lookup of a listed name that is
    /// absent costs one test.
    private var present: UInt64 = 0

    /// No fields.
    public init() {}

    /// No fields yet, with room for `capacity` (a head being parsed: no regrowth per line).
    public init(capacity: Int) { fields.reserveCapacity(capacity) }

    /// Fields from name/value pairs, in order.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
        for field in fields { present |= field.code.bit }
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// Number of field lines.
    public var count: Int { fields.count }

    /// Room for `count` fields without reallocating.
    public mutating func reserveCapacity(_ count: Int) { fields.reserveCapacity(count) }

    /// Appends a field line.
    public mutating func append(name: String, value: String) { append(Field(name: name, value: value)) }

    /// Appends a field line whose name's code is known.
    mutating func append(name: String, value: String, code: FieldCode, opaque: Bool = false) {
        append(Field(name: name, value: value, code: code, opaque: opaque))
    }

    /// Appends a field line whose value is `bytes` as received (``Field/wireText(_:)``).
    mutating func append(name: String, wireValue bytes: UnsafeRawBufferPointer, code: FieldCode) {
        let (text, opaque) = Field.wireText(bytes)
        append(Field(name: name, value: text, code: code, opaque: opaque))
    }

    /// Adds `bytes` after a space to the last line's value (an obs-fold's continuation, RFC 9112
    /// §5.2); nothing when there is no line. Its name, and so the lines' order and codes, stay as
    /// they were; the value stays opaque if either part is.
    mutating func extendLastValue(withWire bytes: UnsafeRawBufferPointer) {
        guard let last = fields.last else { return }
        let (text, opaque) = Field.wireText(bytes)
        let joined: String
        if last.opaque == opaque {
            joined = last.value + " " + text
        } else {
            // One of the two is bytes as ISO-8859-1: the other's UTF-8 bytes are read so too.
            let before = Field.wireBytes(last.value, opaque: last.opaque)
            let after = Field.wireBytes(text, opaque: opaque)
            joined = String(decoding: (before + [0x20] + after).map { UInt16($0) }, as: UTF16.self)
        }
        fields[fields.count - 1] = Field(
            name: last.name, value: joined, code: last.code, opaque: last.opaque || opaque)
    }

    /// Appends `field` as it is (its opacity kept).
    mutating func append(line field: Field) { append(field) }

    private mutating func append(_ field: Field) {
        present |= field.code.bit
        fields.append(field)
    }

    /// Whether a line of `code` may be present (certainly not when false; ``FieldCode/other``
    /// is always possible).
    @inline(__always)
    private func mayContain(_ code: FieldCode) -> Bool { code == .other || present & code.bit != 0 }

    // The lookups below walk indices and read `fields[index].code` in place: binding each
    // `Field` to a name would copy (retain) its two strings per line.

    /// The index of the first line of `name` (whose code is `code`) from `start`, or `nil`.
    @inline(__always)
    private func index(of name: String, code: FieldCode, from start: Int = 0) -> Int? {
        var index = start
        while index < fields.count {
            if fields[index].code == code, code != .other || Field.equalIgnoringCase(fields[index].name, name) {
                return index
            }
            index += 1
        }
        return nil
    }

    /// The first value of `name`, or `nil`.
    public subscript(_ name: String) -> String? {
        let code = FieldCode(name)
        guard mayContain(code), let index = index(of: name, code: code) else { return nil }
        return fields[index].value
    }

    /// The first value of the field `code` names, or `nil`.
    public subscript(_ code: FieldCode) -> String? {
        guard contains(code), let index = index(of: "", code: code) else { return nil }
        return fields[index].value
    }

    /// The first value of the field `code` names as it is compared with another (entity tags,
    /// validators): an opaque value's bytes past ASCII as private-use characters (U+10FF80 on),
    /// so that a byte 0xE9 never equals the UTF-8 é, whose text is the same. Compare the results
    /// byte for byte (``Field/sameBytes(_:_:)``), not as Unicode text.
    func comparable(_ code: FieldCode) -> String? {
        guard contains(code), let index = index(of: "", code: code) else { return nil }
        return Field.comparable(fields[index])
    }

    /// The value of the field `code` names when exactly one line has it, else `nil`.
    public func onlyValue(_ code: FieldCode) -> String? {
        guard contains(code), let index = index(of: "", code: code),
            self.index(of: "", code: code, from: index + 1) == nil
        else { return nil }
        return fields[index].value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] { values(of: name, code: FieldCode(name)) }

    /// Every value of the field `code` names, in order.
    public func values(_ code: FieldCode) -> [String] { code == .other ? [] : values(of: "", code: code) }

    private func values(of name: String, code: FieldCode) -> [String] {
        guard mayContain(code) else { return [] }
        var values: [String] = []
        var next = index(of: name, code: code)
        while let index = next {
            values.append(fields[index].value)
            next = self.index(of: name, code: code, from: index + 1)
        }
        return values
    }

    /// Whether `name` is present.
    public func contains(_ name: String) -> Bool {
        let code = FieldCode(name)
        guard mayContain(code) else { return false }
        return code != .other || index(of: name, code: code) != nil
    }

    /// Whether a line of `code` is present.
    public func contains(_ code: FieldCode) -> Bool {
        code != .other && present & code.bit != 0
    }

    /// Every comma-separated element of every `name` line, trimmed and lower-cased in ASCII only
    /// (`Connection`, `Transfer-Encoding`: tokens are ASCII, RFC 9110 §5.6.2; Unicode case
    /// folding would make `chun\u{212A}ed`, with a Kelvin sign, read as `chunked`).
    public func tokens(_ name: String) -> [String] { Self.tokens(of: values(name)) }

    /// Every comma-separated element of every line of the field `code` names, trimmed and lower-cased.
    public func tokens(_ code: FieldCode) -> [String] { Self.tokens(of: values(code)) }

    private static func tokens(of values: [String]) -> [String] {
        values.flatMap { $0.split(separator: ",") }.map { $0.trimmingOWS().lowercasedASCII() }.filter { !$0.isEmpty }
    }

    /// Removes every line of the field `code` names.
    public mutating func remove(_ code: FieldCode) {
        remove(codes: code.bit)
    }

    /// Removes every line whose code's bit is in `codes` (``FieldCode/bit``; not ``FieldCode/other``).
    mutating func remove(codes: UInt64) {
        guard present & codes & ~FieldCode.other.bit != 0 else { return }
        fields.removeAll { codes & $0.code.bit != 0 && $0.code != .other }
        present &= ~codes | FieldCode.other.bit
    }

    /// Removes every line of `name`.
    public mutating func remove(_ name: String) {
        let code = FieldCode(name)
        guard mayContain(code) else { return }
        if code != .other { return remove(codes: code.bit) }
        removeAll { $0.hasName(name, code: code) }
    }

    /// Removes every line for which `shouldRemove` is true. Fields shared with another copy are
    /// copied only when a line really goes.
    public mutating func removeAll(where shouldRemove: (Field) -> Bool) {
        guard fields.contains(where: shouldRemove) else { return }
        fields.removeAll(where: shouldRemove)
        present = 0
        for field in fields { present |= field.code.bit }
    }

    /// Removes every line whose name is one of `keys` (given in lower case).
    public mutating func remove(keys: [String]) {
        var codes: UInt64 = 0
        var others: [String] = []
        for key in keys {
            let code = FieldCode(key)
            if code == .other { others.append(key) } else { codes |= code.bit }
        }
        remove(codes: codes)
        guard !others.isEmpty, present & FieldCode.other.bit != 0 else { return }
        removeAll { field in field.code == .other && others.contains { Field.equalIgnoringCase(field.name, $0) } }
    }

    /// Replaces every line of `field`'s name by `field` (its value's opacity kept).
    public mutating func set(line field: Field) {
        if mayContain(field.code), let index = index(of: field.name, code: field.code) {
            fields[index] = field
            while let position = self.index(of: field.name, code: field.code, from: index + 1) {
                fields.remove(at: position)
            }
        } else {
            append(field)
        }
    }

    /// Replaces every line of `name` by one line with `value`.
    public mutating func set(_ name: String, _ value: String) {
        let code = FieldCode(name)
        if mayContain(code), let index = index(of: name, code: code) {
            fields[index].value = value
            while let position = self.index(of: name, code: code, from: index + 1) { fields.remove(at: position) }
        } else {
            append(Field(name: name, value: value, code: code))
        }
    }
}

extension StringProtocol {
    /// With A-Z lower-cased and nothing else changed (ASCII case-insensitivity, as HTTP's).
    func lowercasedASCII() -> String {
        guard utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return String(self) }
        return String(decoding: utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

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
