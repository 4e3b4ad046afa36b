import Regexp

/// One compiled schema: its keywords turned into the checks the streaming validator runs, with
/// member names in a hash table, `required` as bits, `$ref`s to other nodes (cycles included).
/// Built once per contract load; read-only afterwards.
public final class Schema {
    /// JSON Schema's instance types, as bits.
    struct Types: OptionSet {
        let rawValue: UInt8
        static let null = Types(rawValue: 1)
        static let boolean = Types(rawValue: 2)
        static let object = Types(rawValue: 4)
        static let array = Types(rawValue: 8)
        static let number = Types(rawValue: 16)
        static let integer = Types(rawValue: 32)
        static let string = Types(rawValue: 64)
        /// With `integer`: an integer is a number written without a fraction or an exponent, as
        /// draft-04 says (§3.5) and so OpenAPI 3.0 and Swagger 2.0 (`80.0` is a number, not an
        /// integer: Go and .NET clients refuse it); later drafts say any number whose value is whole.
        static let integerByForm = Types(rawValue: 128)
        static let all: Types = [.null, .boolean, .object, .array, .number, .integer, .string]

        var names: [String] {
            var names: [String] = []
            if contains(.array) { names.append("array") }
            if contains(.boolean) { names.append("boolean") }
            if contains(.integer) && !contains(.number) { names.append("integer") }
            if contains(.null) { names.append("null") }
            if contains(.number) { names.append("number") }
            if contains(.object) { names.append("object") }
            if contains(.string) { names.append("string") }
            return names
        }
    }

    /// `#/components/schemas/Item` (document-relative when in the contract's main document).
    public internal(set) var location: String
    /// The schema resource (base URI) it belongs to: the dynamic scope's unit.
    var resource: String = ""
    /// `true`/`false` schemas; `nil` for objects.
    var constant: Bool?
    var types: Types = .all
    var typesWritten = false
    var enumValues: [Value]?
    var constValue: Value?
    /// `enum`/`const` name an object or array: the validator keeps the instance value (bounded).
    var needsWholeValue = false

    // Numbers
    var minimum: Number?
    var maximum: Number?
    var exclusiveMinimum: Number?
    var exclusiveMaximum: Number?
    var multipleOf: Number?
    var hasNumberChecks = false

    // Strings
    var minLength: Int?
    var maxLength: Int?
    var pattern: Pattern?
    var format: Format?
    var hasStringChecks = false

    // Arrays
    var prefixItems: [Schema] = []
    var items: Schema?
    var contains: Schema?
    var minContains = 1
    var maxContains: Int?
    var minItems: Int?
    var maxItems: Int?
    var uniqueItems = false
    var unevaluatedItems: Schema?
    var hasArrayChecks = false

    // Objects
    let keys = KeyTable()
    /// Per known key (index in ``keys``): its `properties` schema.
    var propertySchemas: [Schema?] = []
    /// Bits of the required keys (indices < 64) and the required indices beyond 64.
    var requiredMask: UInt64 = 0
    var requiredBeyond: [Int] = []
    var patternProperties: [(Pattern, Schema)] = []
    var additionalProperties: Schema?
    var minProperties: Int?
    var maxProperties: Int?
    /// (trigger key index, required key indices).
    var dependentRequired: [(Int, [Int])] = []
    /// (trigger key index, schema): applied in place when the key is present.
    var dependentSchemas: [(Int, Schema)] = []
    var propertyNames: Schema?
    var unevaluatedProperties: Schema?
    var hasObjectChecks = false
    /// OpenAPI `readOnly` (`writeOnly`) properties: not required in requests (responses).
    var readOnlyMask: UInt64 = 0
    var writeOnlyMask: UInt64 = 0
    /// OpenAPI 3.0 and Swagger 2.0: a `readOnly` property sent in a request (a `writeOnly` one in
    /// a response) breaks the contract (2.0: "MUST NOT be sent"; 3.0: "SHOULD NOT"); in 3.1 they
    /// are JSON Schema's annotations.
    var rejectsAccess = false

    // In place
    var allOf: [Schema] = []
    var anyOf: [Schema] = []
    var oneOf: [Schema] = []
    var not: Schema?
    var ifSchema: Schema?
    var thenSchema: Schema?
    var elseSchema: Schema?
    var ref: Schema?
    var dynamicRef: DynamicRef?
    var discriminator: Discriminator?
    var hasInPlace = false
    var hasUnevaluated = false

    init(location: String) { self.location = location }

    // MARK: - The frozen view (no reference counting on the hot path)

    /// Per known key, its `properties` target, unretained (the graph owns the nodes).
    private(set) var frozenProperties: UnsafeMutablePointer<Unmanaged<Schema>?>?
    private(set) var frozenAdditional: Unmanaged<Schema>?
    /// `additionalProperties: false`.
    private(set) var forbidsAdditional = false
    /// An object schema whose members need only names → targets (no patterns, no
    /// `propertyNames`, no `unevaluatedProperties`, no discriminator): the one-slot fast path.
    private(set) var plainObject = false

    /// `enum`/`const` present (the arrays are touched only then).
    private(set) var hasEnum = false
    private(set) var hasConst = false
    /// `enum` of strings (and null) only: their bytes, compared without building values.
    private(set) var enumStrings: UnsafeMutablePointer<UInt8>?
    private(set) var enumOffsets: UnsafeMutablePointer<Int>?
    private(set) var enumStringCount = -1
    private(set) var enumAllowsNull = false
    /// `minLength`/`maxLength` as plain integers (-1: none).
    private(set) var lengthMinimum = -1
    private(set) var lengthMaximum = -1
    private(set) var hasPatternOrFormat = false

    /// Builds the frozen view; after the compiler's last change to the node.
    func freeze() {
        hasEnum = enumValues != nil
        hasConst = constValue != nil
        lengthMinimum = minLength ?? -1
        lengthMaximum = maxLength ?? -1
        hasPatternOrFormat = pattern != nil || format != nil
        enumStrings?.deallocate()
        enumOffsets?.deallocate()
        enumStrings = nil
        enumOffsets = nil
        enumStringCount = -1
        if let values = enumValues, values.allSatisfy({ $0.string != nil || $0 == .null }) {
            let strings = values.compactMap(\.string).map { Array($0.utf8) }
            let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: max(strings.reduce(0) { $0 + $1.count }, 1))
            let offsets = UnsafeMutablePointer<Int>.allocate(capacity: strings.count + 1)
            var offset = 0
            offsets[0] = 0
            for (index, string) in strings.enumerated() {
                (bytes + offset).initialize(from: string, count: string.count)
                offset += string.count
                offsets[index + 1] = offset
            }
            enumStrings = bytes
            enumOffsets = offsets
            enumStringCount = strings.count
            enumAllowsNull = values.contains(.null)
        }
        frozenProperties?.deallocate()
        let count = keys.count
        let table = UnsafeMutablePointer<Unmanaged<Schema>?>.allocate(capacity: max(count, 1))
        for index in 0..<count {
            table[index] =
                index < propertySchemas.count ? propertySchemas[index].map { Unmanaged.passUnretained($0) } : nil
        }
        frozenProperties = table
        frozenAdditional = additionalProperties.flatMap { $0.constant == false ? nil : Unmanaged.passUnretained($0) }
        forbidsAdditional = additionalProperties?.constant == false
        plainObject =
            constant == nil && patternProperties.isEmpty && propertyNames == nil && unevaluatedProperties == nil
            && discriminator == nil && dependentSchemas.isEmpty && !hasInPlace
    }

    deinit {
        frozenProperties?.deallocate()
        enumStrings?.deallocate()
        enumOffsets?.deallocate()
    }

    /// Whether a scalar token is one of an `enum` of strings (and null); `nil` when the enum is
    /// not of that kind.
    @inline(__always) func enumAccepts(_ token: Token) -> Bool? {
        guard enumStringCount >= 0, let bytes = enumStrings, let offsets = enumOffsets else { return nil }
        return stringEnumAccepts(bytes, offsets, enumStringCount, enumAllowsNull, token)
    }

    /// The compiled target of a `$dynamicRef`: the static target, and the anchor name to look for
    /// in the dynamic scope when the static target has a `$dynamicAnchor` of that name.
    struct DynamicRef {
        var target: Schema
        var anchor: String?
    }

    /// OpenAPI's discriminator: the property that names the branch, and which branch each value picks.
    struct Discriminator {
        var property: String
        var keyIndex: Int
        /// Value → index in `oneOf` (or `anyOf`).
        var branches: [String: Int]
    }

    func finish() {
        hasInPlace =
            !allOf.isEmpty || !anyOf.isEmpty || !oneOf.isEmpty || not != nil || ifSchema != nil || ref != nil
            || dynamicRef != nil || !dependentSchemas.isEmpty
        hasUnevaluated = unevaluatedItems != nil || unevaluatedProperties != nil
        hasNumberChecks =
            minimum != nil || maximum != nil || exclusiveMinimum != nil || exclusiveMaximum != nil || multipleOf != nil
            || format?.isNumeric == true
        hasStringChecks = minLength != nil || maxLength != nil || pattern != nil || format != nil
        hasArrayChecks =
            !prefixItems.isEmpty || items != nil || contains != nil || minItems != nil || maxItems != nil || uniqueItems
            || unevaluatedItems != nil
        hasObjectChecks =
            keys.count > 0 || !patternProperties.isEmpty || additionalProperties != nil || minProperties != nil
            || maxProperties != nil || propertyNames != nil || unevaluatedProperties != nil || requiredMask != 0
            || !requiredBeyond.isEmpty || !dependentRequired.isEmpty || discriminator != nil
    }

    /// Drops every reference to other nodes (the graph has cycles; its owner breaks them when it goes).
    func unlink() {
        propertySchemas = []
        prefixItems = []
        items = nil
        contains = nil
        unevaluatedItems = nil
        patternProperties = []
        additionalProperties = nil
        dependentSchemas = []
        propertyNames = nil
        unevaluatedProperties = nil
        allOf = []
        anyOf = []
        oneOf = []
        not = nil
        ifSchema = nil
        thenSchema = nil
        elseSchema = nil
        ref = nil
        dynamicRef = nil
    }

    /// Whether the schema accepts every instance with no check at all (`true`, `{}`).
    var acceptsEverything: Bool {
        constant == true
            || (constant == nil && types == .all && enumValues == nil && constValue == nil && !hasNumberChecks
                && !hasStringChecks && !hasArrayChecks && !hasObjectChecks && !hasInPlace)
    }
}

/// Member names → small integers: open addressing over the UTF-8 bytes with a cheap hash, the
/// names in one byte run, so that a lookup is a hash, one compare of lengths and a compare of
/// bytes. Read through raw pointers once built (no copies, no reference counting on the hot path).
final class KeyTable {
    private(set) var names: [String] = []
    private var bytes: UnsafeMutablePointer<UInt8> = .allocate(capacity: 1)
    private var byteCount = 0
    private var starts: UnsafeMutablePointer<Int> = .allocate(capacity: 1)
    private var slots: UnsafeMutablePointer<Int32> = .allocate(capacity: 1)
    private var mask = 0
    private(set) var count = 0

    init() { starts[0] = 0 }

    deinit {
        bytes.deallocate()
        starts.deallocate()
        slots.deallocate()
    }

    /// The table's memory as it is now (rebuilt by ``index(of:)``: take it after the last name).
    var raw: Raw { Raw(bytes: bytes, starts: starts, slots: slots, mask: mask, count: count) }

    /// The index of `name`, adding it when new.
    func index(of name: String) -> Int {
        var name = name
        if let found = name.withUTF8({ lookup(UnsafeRawBufferPointer($0)) }) { return found }
        names.append(name)
        rebuild()
        return names.count - 1
    }

    private func rebuild() {
        let all = names.flatMap { Array($0.utf8) }
        bytes.deallocate()
        bytes = .allocate(capacity: max(all.count, 1))
        bytes.initialize(from: all, count: all.count)
        byteCount = all.count
        starts.deallocate()
        starts = .allocate(capacity: names.count + 1)
        var offset = 0
        starts[0] = 0
        for (index, name) in names.enumerated() {
            offset += name.utf8.count
            starts[index + 1] = offset
        }
        count = names.count
        var size = 8
        while size < names.count * 3 { size <<= 1 }
        mask = size - 1
        slots.deallocate()
        slots = .allocate(capacity: size)
        slots.initialize(repeating: -1, count: size)
        for index in 0..<count {
            let key = UnsafeRawBufferPointer(start: bytes + starts[index], count: starts[index + 1] - starts[index])
            var slot = KeyTable.hash(key) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(index)
        }
    }

    @inline(__always) static func hash(_ key: UnsafeRawBufferPointer) -> Int {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(key.count)
        var index = 0
        while index + 8 <= key.count {
            h = (h ^ key.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            h ^= h >> 29
            index += 8
        }
        if index < key.count {
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while index < key.count {
                tail |= UInt64(key[index]) << shift
                shift += 8
                index += 1
            }
            h = (h ^ tail) &* 0xC4CE_B9FE_1A85_EC53
            h ^= h >> 32
        }
        return Int(truncatingIfNeeded: h)
    }

    /// The index of the name spelled by `key`, or `nil`.
    @inline(__always) func lookup(_ key: UnsafeRawBufferPointer) -> Int? {
        let found = raw.lookup(key)
        return found >= 0 ? found : nil
    }

    /// Whether name `index` is spelled `key`.
    @inline(__always) func matches(_ index: Int, _ key: UnsafeRawBufferPointer) -> Bool { raw.matches(index, key) }
}

/// Whether `token` is one of `count` strings laid end to end in `bytes` (`offsets[i]..<offsets[i + 1]`),
/// or a null when `allowsNull`: a string `enum`, compared without building values.
@inline(__always) func stringEnumAccepts(
    _ bytes: UnsafeMutablePointer<UInt8>, _ offsets: UnsafeMutablePointer<Int>, _ count: Int, _ allowsNull: Bool,
    _ token: Token
) -> Bool {
    switch token.kind {
    case .null: return allowsNull
    case .string:
        for index in 0..<count {
            let length = offsets[index + 1] - offsets[index]
            if length == token.bytes.count
                && (length == 0
                    || memcmpBytes(UnsafeRawPointer(bytes + offsets[index]), token.bytes.baseAddress!, length))
            {
                return true
            }
        }
        return false
    default: return false
    }
}

@inline(__always) func memcmpBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
    var index = 0
    while index + 8 <= count {
        if a.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            != b.loadUnaligned(fromByteOffset: index, as: UInt64.self)
        {
            return false
        }
        index += 8
    }
    while index < count {
        if a.load(fromByteOffset: index, as: UInt8.self) != b.load(fromByteOffset: index, as: UInt8.self) {
            return false
        }
        index += 1
    }
    return true
}
