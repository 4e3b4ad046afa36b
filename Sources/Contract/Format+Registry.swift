// The OpenAPI Format Registry's entries with a definition to check (spec.openapis.org/registry/
// format): integers of each width, `double-int`, `decimal`, `decimal128`, `base64url`, `char`,
// the local date-times, `http-date`, `media-range` and Structured Field values (RFC 8941).
// `float`, `double`, `binary`, `password`, `commonmark`, `html` and `sf-boolean` stay annotations.

extension Format {
    /// A number in a numeric format: an integer in its range, a decimal of its size.
    func accepts(_ number: Number) -> Bool {
        let integerDigits = max(0, number.exponent)
        let fractionDigits = max(0, number.digits.count - number.exponent)
        switch self {
        case .decimal: return true
        case .decimal128:
            // 34 significant digits; exponents as IEEE 754's decimal128 takes them (subnormals too).
            return number.digits.count <= 34 && (number.isZero || (-6175...6145).contains(number.exponent))
        case .sfDecimal: return integerDigits <= 12 && fractionDigits <= 3
        case .sfInteger: return number.isInteger && integerDigits <= 15
        default:
            guard number.isInteger, let (low, high) = Format.ranges[self] else { return false }
            return Number.compare(number, low) >= 0 && Number.compare(number, high) <= 0
        }
    }

    /// An integer of at most 18 digits in a numeric format.
    func accepts(small value: Int64) -> Bool {
        switch self {
        case .int8: return Int64(Int8.min)...Int64(Int8.max) ~= value
        case .int16: return Int64(Int16.min)...Int64(Int16.max) ~= value
        case .int32: return Int64(Int32.min)...Int64(Int32.max) ~= value
        case .uint8: return 0...Int64(UInt8.max) ~= value
        case .uint16: return 0...Int64(UInt16.max) ~= value
        case .uint32: return 0...Int64(UInt32.max) ~= value
        case .uint64: return value >= 0
        case .doubleInt: return value.magnitude <= Format.maxSafeInteger
        case .sfInteger: return value.magnitude <= 999_999_999_999_999
        case .sfDecimal: return value.magnitude < 1_000_000_000_000
        default: return true
        }
    }

    /// 2⁵³ − 1: the integers a double holds exactly, and their negatives.
    static let maxSafeInteger: UInt64 = 9_007_199_254_740_991

    private static let ranges: [Format: (Number, Number)] = [
        .int8: (Number(Int(Int8.min)), Number(Int(Int8.max))),
        .int16: (Number(Int(Int16.min)), Number(Int(Int16.max))),
        .int32: (Number(Int(Int32.min)), Number(Int(Int32.max))),
        .int64: (Number(Int(Int64.min)), Number(Int(Int64.max))),
        .uint8: (Number(0), Number(Int(UInt8.max))), .uint16: (Number(0), Number(Int(UInt16.max))),
        .uint32: (Number(0), Number(Int(UInt32.max))),
        .uint64: (Number(0), Number(text: Array("18446744073709551615".utf8))!),
        .doubleInt: (Number(-Int(maxSafeInteger)), Number(Int(maxSafeInteger))),
    ]

    /// A number written as a string, for the formats whose registry entry takes strings: int64 and
    /// uint64 an integer without sign or leading zeros beyond JSON's (`-12`, not `+12` or `012`),
    /// decimal a fixed-point numeral (`-12.50`), decimal128 any JSON number of its size, or `NaN`,
    /// `INF`, `-INF` (the values a JSON number cannot hold).
    static func acceptsNumberText(_ format: Format, _ bytes: [UInt8]) -> Bool {
        let isDigit = { (byte: UInt8) in byte >= 0x30 && byte <= 0x39 }
        switch format {
        case .int64, .uint64:
            let unsigned = bytes.first == 0x2D ? bytes.dropFirst() : bytes[...]
            guard !unsigned.isEmpty, unsigned.allSatisfy(isDigit), unsigned.first != 0x30 || unsigned.count == 1,
                let number = Number(text: bytes)
            else { return false }
            return format.accepts(number)
        case .decimal:
            let unsigned = bytes.first == 0x2D || bytes.first == 0x2B ? bytes.dropFirst() : bytes[...]
            let parts = unsigned.split(separator: 0x2E, maxSplits: 1, omittingEmptySubsequences: false)
            return !parts[0].isEmpty && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(isDigit) }
        default:
            if ["NaN", "INF", "-INF"].contains(where: { bytes.elementsEqual($0.utf8) }) { return true }
            guard JSONGrammar.isNumber(bytes), let number = Number(text: bytes) else { return false }
            return format.accepts(number)
        }
    }

    /// RFC 8941 §3.3.3 sf-string as the field carries it: quoted, printable ASCII, `\` escaping
    /// only `"` and `\`.
    static func isStructuredString(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 2, bytes.first == 0x22, bytes.last == 0x22 else { return false }
        var index = 1
        while index < bytes.count - 1 {
            let byte = bytes[index]
            if byte == 0x5C {
                guard index + 1 < bytes.count - 1, bytes[index + 1] == 0x22 || bytes[index + 1] == 0x5C else {
                    return false
                }
                index += 2
                continue
            }
            guard byte >= 0x20, byte <= 0x7E, byte != 0x22 else { return false }
            index += 1
        }
        return true
    }

    /// RFC 4648 §5: the URL- and filename-safe alphabet; `=` padding optional, only at the end of
    /// a whole group of four; unpadded, never one character past a group.
    static func isBase64URL(_ bytes: [UInt8]) -> Bool {
        let padding = bytes.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard padding <= 2, padding == 0 || bytes.count % 4 == 0, bytes.count % 4 != 1 else { return false }
        return bytes.dropLast(padding).allSatisfy { byte in
            let letter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
            let digit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            return letter || digit || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    /// RFC 3339 partial-time, without an offset: `23:59:59.5`.
    static func isLocalTime(_ bytes: ArraySlice<UInt8>) -> Bool {
        let s = bytes.startIndex
        guard bytes.count >= 8, bytes[s + 2] == 0x3A, bytes[s + 5] == 0x3A, let hour = number(bytes[s..<(s + 2)]),
            let minute = number(bytes[(s + 3)..<(s + 5)]), let second = number(bytes[(s + 6)..<(s + 8)]), hour <= 23,
            minute <= 59, second <= 60
        else { return false }
        guard bytes.count > 8 else { return true }
        let fraction = bytes[(s + 8)...]
        return fraction.count > 1 && fraction.first == 0x2E
            && fraction.dropFirst().allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// Decimal digits only, as a value.
    private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return bytes.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    private static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    private static let monthNames = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    /// RFC 9110 §5.6.7: an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), or one of the obsolete
    /// forms a recipient must accept: rfc850-date (`Sunday, 06-Nov-94 08:49:37 GMT`) and
    /// asctime-date (`Sun Nov  6 08:49:37 1994`). Case-sensitive; the date must exist.
    static func isHTTPDate(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        func month(_ name: Substring) -> Int? { monthNames.firstIndex(of: String(name)).map { $0 + 1 } }
        func time(_ part: Substring) -> Bool { isLocalTime(Array(part.utf8)[...]) && part.utf8.count == 8 }
        func exists(year: Int, month: Int, day: Int) -> Bool {
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            return (1...[31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]).contains(day)
        }
        let fields = text.split(separator: " ", omittingEmptySubsequences: false)
        if fields.count == 6, fields[0].hasSuffix(","), dayNames.contains(String(fields[0].dropLast())) {
            // IMF-fixdate: day-name "," SP 2DIGIT SP month SP 4DIGIT SP time SP "GMT"
            guard fields[1].count == 2, let day = number(ArraySlice(fields[1].utf8)),
                let month = month(fields[2]), fields[3].count == 4, let year = number(ArraySlice(fields[3].utf8)),
                time(fields[4]), fields[5] == "GMT"
            else { return false }
            return exists(year: year, month: month, day: day)
        }
        if fields.count == 4, fields[0].hasSuffix(","), longDayNames.contains(String(fields[0].dropLast())) {
            // rfc850-date: day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP time SP "GMT"
            let date = fields[1].split(separator: "-", omittingEmptySubsequences: false)
            guard date.count == 3, date[0].count == 2, let day = number(ArraySlice(date[0].utf8)),
                let month = month(date[1]), date[2].count == 2, number(ArraySlice(date[2].utf8)) != nil,
                time(fields[2]), fields[3] == "GMT"
            else { return false }
            return exists(year: 2000, month: month, day: day)  // a leap year: Feb 29 of any century
        }
        // asctime-date: day-name SP month SP ( 2DIGIT / ( SP 1DIGIT ) ) SP time SP 4DIGIT
        guard bytes.count == 24, dayNames.contains(String(text.prefix(3))), bytes[3] == 0x20, bytes[7] == 0x20,
            bytes[10] == 0x20, bytes[19] == 0x20, let month = month(text.dropFirst(4).prefix(3))
        else { return false }
        let dayText = bytes[8] == 0x20 ? bytes[9..<10] : bytes[8..<10]
        guard let day = number(dayText), time(text.dropFirst(11).prefix(8)), let year = number(bytes[20..<24]) else {
            return false
        }
        return exists(year: year, month: month, day: day)
    }

    /// RFC 9110 §5.6.2 tchar.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A)
            || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }

    /// RFC 9110 §12.5.1: `*/*`, `type/*` or `type/subtype`, then `;`-separated parameters
    /// (`name=token` or `name="quoted"`, optional whitespace around the `;`).
    static func isMediaRange(_ bytes: [UInt8]) -> Bool {
        var index = 0
        func token() -> Bool {
            let start = index
            while index < bytes.count, isTokenCharacter(bytes[index]) { index += 1 }
            return index > start
        }
        func whitespace() { while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 } }
        guard token(), index < bytes.count, bytes[index] == 0x2F else { return false }
        let wildType = bytes[..<index].elementsEqual([0x2A])
        index += 1
        guard token() else { return false }
        // `*/subtype` is no range.
        if wildType, !bytes[(bytes.firstIndex(of: 0x2F)! + 1)..<index].elementsEqual([0x2A]) { return false }
        while true {
            // White space only before a `;` (or after one): `text/html ` is no range.
            let before = index
            whitespace()
            guard index < bytes.count else { return index == before }
            guard bytes[index] == 0x3B else { return false }
            index += 1
            whitespace()
            if index == bytes.count || bytes[index] == 0x3B { continue }  // an empty parameter
            guard token(), index < bytes.count, bytes[index] == 0x3D else { return false }
            index += 1
            if index < bytes.count, bytes[index] == 0x22 {
                index += 1
                var closed = false
                while index < bytes.count {
                    let byte = bytes[index]
                    if byte == 0x5C {
                        guard index + 1 < bytes.count else { return false }
                        index += 2
                        continue
                    }
                    index += 1
                    if byte == 0x22 {
                        closed = true
                        break
                    }
                    guard byte == 0x09 || byte >= 0x20, byte != 0x7F else { return false }
                }
                guard closed else { return false }
            } else if !token() {
                return false
            }
        }
    }

    /// RFC 8941 §3.3.4 sf-token: a letter or `*`, then token characters, `:` and `/`.
    static func isStructuredToken(_ bytes: [UInt8]) -> Bool {
        guard let first = bytes.first, (first | 0x20) >= 0x61 && (first | 0x20) <= 0x7A || first == 0x2A else {
            return false
        }
        return bytes.dropFirst().allSatisfy { isTokenCharacter($0) || $0 == 0x3A || $0 == 0x2F }
    }
}
