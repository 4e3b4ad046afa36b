import Regexp

/// The `format`s Sluice asserts with `contract.formats: assert` (an annotation otherwise, as
/// JSON Schema 2020-12 says): JSON Schema's, and from the OpenAPI Format Registry `int32`, `int64`
/// (integers in range) and `byte` (base64, RFC 4648 §4). Unknown format names are annotations
/// always.
enum Format {
    case dateTime, date, time, duration, email, idnEmail, hostname, idnHostname, ipv4, ipv6, uri, uriReference, iri
    case iriReference, uriTemplate, uuid, regex, jsonPointer, relativeJSONPointer
    case int32, int64, byte
    /// Further OpenAPI Format Registry entries with a definition to check (Format+Registry.swift).
    case int8, int16, uint8, uint16, uint32, uint64, doubleInt, decimal, decimal128
    case base64url, char, dateTimeLocal, timeLocal, httpDate, mediaRange
    case sfInteger, sfDecimal, sfString, sfToken, sfBinary

    init?(_ name: String) {
        guard let format = Format.byName[name] else { return nil }
        self = format
    }

    private static let byName: [String: Format] = [
        "date-time": .dateTime, "date": .date, "time": .time, "duration": .duration, "email": .email,
        "idn-email": .idnEmail, "hostname": .hostname, "idn-hostname": .idnHostname, "ipv4": .ipv4, "ipv6": .ipv6,
        "uri": .uri, "uri-reference": .uriReference, "iri": .iri, "iri-reference": .iriReference,
        "uri-template": .uriTemplate, "uuid": .uuid, "regex": .regex, "json-pointer": .jsonPointer,
        "relative-json-pointer": .relativeJSONPointer, "int32": .int32, "int64": .int64, "byte": .byte,
        "int8": .int8, "int16": .int16, "uint8": .uint8, "uint16": .uint16, "uint32": .uint32, "uint64": .uint64,
        "double-int": .doubleInt, "decimal": .decimal, "decimal128": .decimal128, "base64url": .base64url,
        "char": .char, "date-time-local": .dateTimeLocal, "time-local": .timeLocal, "http-date": .httpDate,
        "media-range": .mediaRange, "sf-integer": .sfInteger, "sf-decimal": .sfDecimal, "sf-string": .sfString,
        "sf-token": .sfToken, "sf-binary": .sfBinary,
    ]

    /// A format numbers are subject to (the others apply to strings only).
    var isNumeric: Bool {
        switch self {
        case .int8, .int16, .int32, .int64, .uint8, .uint16, .uint32, .uint64, .doubleInt, .decimal, .decimal128,
            .sfInteger, .sfDecimal:
            true
        default: false
        }
    }

    var name: String { Format.byName.first { $0.value == self }!.key }

    func accepts(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        switch self {
        case .dateTime:
            guard let t = bytes.firstIndex(where: { $0 == UInt8(ascii: "T") || $0 == UInt8(ascii: "t") }) else {
                return false
            }
            return Format.isDate(bytes[..<t]) && Format.isTime(bytes[(t + 1)...])
        case .date: return Format.isDate(bytes[...])
        case .time: return Format.isTime(bytes[...])
        case .duration: return Format.isDuration(bytes)
        case .email: return Format.isEmail(text, international: false)
        case .idnEmail: return Format.isEmail(text, international: true)
        case .hostname: return Format.isHostname(text)
        case .idnHostname: return Format.isIDNHostname(text)
        case .ipv4: return Format.isIPv4(Substring(text))
        case .ipv6: return Format.isIPv6(text)
        case .uri: return Format.isReference(text, ReferenceGrammar(international: false, relative: false))
        case .uriReference: return Format.isReference(text, ReferenceGrammar(international: false, relative: true))
        case .iri: return Format.isReference(text, ReferenceGrammar(international: true, relative: false))
        case .iriReference: return Format.isReference(text, ReferenceGrammar(international: true, relative: true))
        case .uriTemplate: return Format.isURITemplate(text)
        case .uuid: return Format.isUUID(bytes)
        case .regex: return ECMAScriptPattern.isValid(text)
        case .jsonPointer: return Format.isJSONPointer(text)
        case .relativeJSONPointer: return Format.isRelativeJSONPointer(bytes)
        case .byte: return Format.isBase64(bytes)
        // Number formats; of them int64, decimal and decimal128 take strings too (the
        // registry's base types: `"9007199254740993"` is an int64 written as a string).
        case .int64, .uint64, .decimal, .decimal128: return Format.acceptsNumberText(self, bytes)
        case .int8, .int16, .int32, .uint8, .uint16, .uint32, .doubleInt, .sfInteger, .sfDecimal: return true
        case .base64url: return Format.isBase64URL(bytes)
        // One character as JSON Schema counts them: a code point (`maxLength: 1`'s unit).
        case .char: return text.unicodeScalars.count == 1
        case .dateTimeLocal:
            guard let t = bytes.firstIndex(where: { $0 == UInt8(ascii: "T") || $0 == UInt8(ascii: "t") }) else {
                return false
            }
            return Format.isDate(bytes[..<t]) && Format.isLocalTime(bytes[(t + 1)...])
        case .timeLocal: return Format.isLocalTime(bytes[...])
        case .httpDate: return Format.isHTTPDate(bytes)
        case .mediaRange: return Format.isMediaRange(bytes)
        case .sfString: return Format.isStructuredString(bytes)
        case .sfToken: return Format.isStructuredToken(bytes)
        // RFC 8941 §3.3.5: the base64 between colons, as the field carries it.
        case .sfBinary:
            return bytes.count >= 2 && bytes.first == 0x3A && bytes.last == 0x3A
                && Format.isBase64(Array(bytes.dropFirst().dropLast()))
        }
    }

    /// RFC 4648 §4: the base64 alphabet in groups of four, `=` padding only at the end.
    static func isBase64(_ bytes: [UInt8]) -> Bool {
        guard bytes.count % 4 == 0 else { return false }
        var padding = 0
        for (index, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: "=") {
                padding += 1
                guard index >= bytes.count - 2 else { return false }
                continue
            }
            let letter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
            let digit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            guard padding == 0, letter || digit || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") else {
                return false
            }
        }
        return true
    }

    private static func digits(_ bytes: ArraySlice<UInt8>, _ start: Int, _ count: Int) -> Int? {
        guard start + count <= bytes.endIndex else { return nil }
        var value = 0
        for index in start..<(start + count) {
            let byte = bytes[index]
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    /// RFC 3339 full-date: `2024-02-29`.
    static func isDate(_ bytes: ArraySlice<UInt8>) -> Bool {
        let s = bytes.startIndex
        guard bytes.count == 10, bytes[s + 4] == 0x2D, bytes[s + 7] == 0x2D, let year = digits(bytes, s, 4),
            let month = digits(bytes, s + 5, 2), let day = digits(bytes, s + 8, 2), (1...12).contains(month)
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }

    /// RFC 3339 full-time with an offset: `23:59:60.5+01:00` (a leap second only at 23:59 UTC).
    static func isTime(_ bytes: ArraySlice<UInt8>) -> Bool {
        let s = bytes.startIndex
        guard bytes.count >= 9, bytes[s + 2] == 0x3A, bytes[s + 5] == 0x3A, let hour = digits(bytes, s, 2),
            let minute = digits(bytes, s + 3, 2), let second = digits(bytes, s + 6, 2), hour <= 23, minute <= 59,
            second <= 60
        else { return false }
        var index = s + 8
        if index < bytes.endIndex, bytes[index] == 0x2E {
            index += 1
            let start = index
            while index < bytes.endIndex, bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
            guard index > start else { return false }
        }
        guard index < bytes.endIndex else { return false }
        var offsetMinutes = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == bytes.endIndex else { return false }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == bytes.endIndex, bytes[index + 3] == 0x3A, let oh = digits(bytes, index + 1, 2),
                let om = digits(bytes, index + 4, 2), oh <= 23, om <= 59
            else { return false }
            offsetMinutes = (oh * 60 + om) * (bytes[index] == UInt8(ascii: "+") ? 1 : -1)
        default: return false
        }
        if second == 60 {
            // A leap second is 23:59:60 in UTC.
            let utc = ((hour * 60 + minute - offsetMinutes) % 1440 + 1440) % 1440
            return utc == 23 * 60 + 59
        }
        return true
    }

    /// RFC 3339 Appendix A's duration: `P` then a run of `Y`, `M`, `D` in that order with none
    /// skipped between the first and the last (`P1Y2D` is not one), optionally `T` and a run of
    /// `H`, `M`, `S` likewise; or weeks alone (`P4W`).
    static func isDuration(_ bytes: [UInt8]) -> Bool {
        guard bytes.first == UInt8(ascii: "P") else { return false }
        let body = bytes.dropFirst()
        let time = body.firstIndex(of: UInt8(ascii: "T"))
        let datePart = body[..<(time ?? body.endIndex)]
        let timePart = time.map { body[($0 + 1)...] }
        if let last = datePart.last, last == UInt8(ascii: "W") {
            guard timePart == nil, let units = durationUnits(datePart) else { return false }
            return units == Array("W".utf8)
        }
        guard let dateUnits = durationUnits(datePart), isContiguousRun(dateUnits, of: Array("YMD".utf8)) else {
            return false
        }
        if let timePart {
            guard let timeUnits = durationUnits(timePart), !timeUnits.isEmpty,
                isContiguousRun(timeUnits, of: Array("HMS".utf8))
            else { return false }
            return true
        }
        return !dateUnits.isEmpty
    }

    /// The unit letters of `1*DIGIT unit` pairs, or `nil` when the text is not such pairs.
    private static func durationUnits(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        var units: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let start = index
            while index < bytes.endIndex, bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
            guard index > start, index < bytes.endIndex else { return nil }
            units.append(bytes[index])
            index += 1
        }
        return units
    }

    private static func isContiguousRun(_ units: [UInt8], of order: [UInt8]) -> Bool {
        guard let first = units.first else { return true }
        guard let start = order.firstIndex(of: first), start + units.count <= order.count else { return false }
        return Array(order[start..<(start + units.count)]) == units
    }

    static func isIPv4(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
                && (part == "0" || !part.hasPrefix("0")) && Int(part)! <= 255
        }
    }

    static func isIPv6(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 45 else { return false }
        var groups = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        var maxGroups = 8
        if let last = groups.last, last.contains(".") {
            guard isIPv4(Substring(last)) else { return false }
            groups.removeLast()
            groups.append("0")
            maxGroups = 8
            groups.removeLast()
            groups.append(contentsOf: ["0", "0"])
        }
        let compressed = text.ranges(of: "::").count
        guard compressed <= 1, !text.contains(":::") else { return false }
        if text.hasPrefix(":") && !text.hasPrefix("::") { return false }
        if text.hasSuffix(":") && !text.hasSuffix("::") { return false }
        let nonEmpty = groups.filter { !$0.isEmpty }
        for group in nonEmpty {
            guard group.utf8.count <= 4,
                group.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) })
            else { return false }
        }
        return compressed == 0 ? groups.count == maxGroups : nonEmpty.count < maxGroups
    }

    static func isUUID(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == 0x2D else { return false }
            } else {
                guard (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66) else {
                    return false
                }
            }
        }
        return true
    }

    static func isJSONPointer(_ text: String) -> Bool {
        guard text.isEmpty || text.hasPrefix("/") else { return false }
        let bytes = Array(text.utf8)
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "~") {
            guard index + 1 < bytes.count, bytes[index + 1] == 0x30 || bytes[index + 1] == 0x31 else { return false }
        }
        return true
    }

    /// A non-negative integer without leading zeros, an optional index manipulation (`+1`,
    /// `-2`), then `#` or a JSON Pointer (draft-bhutton-relative-json-pointer-00 §3).
    static func isRelativeJSONPointer(_ bytes: [UInt8]) -> Bool {
        func integer(from start: Int) -> Int? {
            var index = start
            while index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
            guard index > start, index == start + 1 || bytes[start] != 0x30 else { return nil }
            return index
        }
        guard var index = integer(from: 0) else { return false }
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            guard let end = integer(from: index + 1) else { return false }
            index = end
        }
        let rest = bytes[index...]
        if rest.first == UInt8(ascii: "#") { return rest.count == 1 }
        return isJSONPointer(String(decoding: rest, as: UTF8.self))
    }
}
