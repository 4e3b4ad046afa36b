import Regexp

/// The `format`s Sluice asserts with `contract.formats: assert` (an annotation otherwise, as
/// JSON Schema 2020-12 says). Unknown format names are annotations always.
enum Format {
    case dateTime, date, time, duration, email, hostname, ipv4, ipv6, uri, uriReference, uuid, regex, jsonPointer

    init?(_ name: String) {
        switch name {
        case "date-time": self = .dateTime
        case "date": self = .date
        case "time": self = .time
        case "duration": self = .duration
        case "email": self = .email
        case "hostname": self = .hostname
        case "ipv4": self = .ipv4
        case "ipv6": self = .ipv6
        case "uri": self = .uri
        case "uri-reference": self = .uriReference
        case "uuid": self = .uuid
        case "regex": self = .regex
        case "json-pointer": self = .jsonPointer
        default: return nil
        }
    }

    var name: String {
        switch self {
        case .dateTime: "date-time"
        case .date: "date"
        case .time: "time"
        case .duration: "duration"
        case .email: "email"
        case .hostname: "hostname"
        case .ipv4: "ipv4"
        case .ipv6: "ipv6"
        case .uri: "uri"
        case .uriReference: "uri-reference"
        case .uuid: "uuid"
        case .regex: "regex"
        case .jsonPointer: "json-pointer"
        }
    }

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
        case .email: return Format.isEmail(text)
        case .hostname: return Format.isHostname(text)
        case .ipv4: return Format.isIPv4(Substring(text))
        case .ipv6: return Format.isIPv6(text)
        case .uri: return Format.isURI(text, requireScheme: true)
        case .uriReference: return Format.isURI(text, requireScheme: false)
        case .uuid: return Format.isUUID(bytes)
        case .regex: return (try? Pattern(text)) != nil
        case .jsonPointer: return Format.isJSONPointer(text)
        }
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

    /// ISO 8601 duration as RFC 3339 Appendix A has it: `P1Y2M3DT4H5M6S`, `P4W`.
    static func isDuration(_ bytes: [UInt8]) -> Bool {
        guard bytes.first == UInt8(ascii: "P"), bytes.count > 1 else { return false }
        var index = 1
        var inTime = false
        var units: [UInt8] = []
        var sawAny = false
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "T") {
                guard !inTime else { return false }
                inTime = true
                index += 1
                guard index < bytes.count else { return false }
                continue
            }
            let start = index
            while index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
            guard index > start, index < bytes.count else { return false }
            let unit = bytes[index]
            let order: [UInt8] = inTime ? Array("HMS".utf8) : Array("YMWD".utf8)
            guard let position = order.firstIndex(of: unit) else { return false }
            if let last = units.last, let lastPosition = order.firstIndex(of: last), lastPosition >= position,
                !inTime || units.count > 0
            {
                return false
            }
            units.append(unit)
            sawAny = true
            index += 1
            if inTime && index == bytes.count { break }
            if !inTime, index < bytes.count, bytes[index] == UInt8(ascii: "T") { units = [] }
        }
        guard sawAny, bytes.last != UInt8(ascii: "T") else { return false }
        // Weeks stand alone.
        if bytes.contains(UInt8(ascii: "W")) { return bytes.count >= 3 && bytes.filter { $0 >= 0x41 }.count == 2 }
        return true
    }

    static func isEmail(_ text: String) -> Bool {
        guard let at = text.lastIndex(of: "@") else { return false }
        let local = text[..<at]
        let domain = text[text.index(after: at)...]
        guard !local.isEmpty, local.utf8.count <= 64, !local.hasPrefix("."), !local.hasSuffix("."),
            !local.contains("..")
        else { return false }
        if domain.hasPrefix("[") && domain.hasSuffix("]") {
            let inner = domain.dropFirst().dropLast()
            if inner.hasPrefix("IPv6:") { return isIPv6(String(inner.dropFirst(5))) }
            return isIPv4(inner)
        }
        return isHostname(String(domain))
    }

    static func isHostname(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        let name = text.hasSuffix(".") ? String(text.dropLast()) : text
        for label in name.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty, label.utf8.count <= 63, !label.hasPrefix("-"), !label.hasSuffix("-"),
                label.utf8.allSatisfy({
                    ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D
                })
            else { return false }
            // IDNA: `xn--` labels only; two hyphens elsewhere in positions 3–4 are reserved.
            let bytes = Array(label.utf8)
            if bytes.count >= 4, bytes[2] == 0x2D, bytes[3] == 0x2D, label.lowercased().hasPrefix("xn") == false {
                return false
            }
        }
        return true
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

    static func isURI(_ text: String, requireScheme: Bool) -> Bool {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%".utf8)
        let bytes = Array(text.utf8)
        guard bytes.allSatisfy({ allowed.contains($0) }) else { return false }
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "%") {
            guard index + 2 < bytes.count,
                bytes[index + 1...index + 2].allSatisfy({
                    ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66)
                })
            else { return false }
        }
        let reference = URIReference(text)
        if requireScheme {
            guard let scheme = reference.scheme, !scheme.isEmpty else { return false }
        }
        if let authority = reference.authority {
            // Brackets only around an IP literal.
            let host = authority.split(separator: "@").last.map(String.init) ?? ""
            if host.contains("[") || host.contains("]") {
                guard host.hasPrefix("["), let close = host.firstIndex(of: "]") else { return false }
                let literal = String(host[host.index(after: host.startIndex)..<close])
                guard isIPv6(literal) || literal.hasPrefix("v") else { return false }
            }
        }
        if reference.fragment?.contains("#") == true { return false }
        if reference.scheme == nil, let colon = reference.path.firstIndex(of: ":"),
            !reference.path[..<colon].contains("/")
        {
            return false
        }
        return !text.contains("\\")
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
}
