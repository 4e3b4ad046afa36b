/// A rule's `accept:` block: which responses are acceptable (AFNetworking's
/// `acceptableStatusCodes` and `acceptableContentTypes`), and what happens to the others.
public struct Acceptance: Sendable, Equatable {
    /// Acceptable status codes; `200-299` by default.
    public var status = StatusSet.successful
    /// Acceptable media types; `nil` = any type.
    public var contentTypes: [MediaRange]?
    /// `enforce` (502 problem, transfer cancelled) or `report` (passes, marked).
    public var onReject = RejectMode.enforce

    public init() {}

    /// What happens to a rejected response.
    public enum RejectMode: String, Sendable, Equatable, CaseIterable {
        /// The transfer is cancelled at the headers and the client gets a 502 problem.
        case enforce
        /// The response passes unchanged, with `Sluice-Validation: failed; …`.
        case report
    }
}

/// A set of status codes: single codes and inclusive ranges, as written (`200-299`, `304`, `2xx`).
public struct StatusSet: Sendable, Equatable, CustomStringConvertible {
    /// The ranges, in the order written.
    public var ranges: [ClosedRange<Int>]
    /// How each was written, for problems and `--reference`.
    public var spelled: [String]

    /// `200-299`, AFNetworking's default.
    public static let successful = StatusSet(ranges: [200...299], spelled: ["200-299"])

    public init(ranges: [ClosedRange<Int>], spelled: [String]) {
        self.ranges = ranges
        self.spelled = spelled
    }

    public func contains(_ status: Int) -> Bool { ranges.contains { $0.contains(status) } }

    public var description: String { spelled.joined(separator: ", ") }

    /// One item: `404`, `"200-299"` or `"2xx"`; `nil` if malformed.
    public static func parseItem(_ text: String) -> ClosedRange<Int>? {
        let trimmed = text.trimmingOWS()
        let valid = 100...599
        if let code = Int(trimmed) { return valid.contains(code) ? code...code : nil }
        let lower = trimmed.lowercased()
        if lower.count == 3, lower.hasSuffix("xx"), let digit = Int(lower.prefix(1)), (1...5).contains(digit) {
            return (digit * 100)...(digit * 100 + 99)
        }
        let parts = trimmed.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let low = Int(parts[0].trimmingOWS()), let high = Int(parts[1].trimmingOWS()),
            valid.contains(low), valid.contains(high), low <= high
        else { return nil }
        return low...high
    }
}

/// A media range as configured: `application/json`, `text/*`, `*/*`, `*/json`, `application/*+json`.
/// Compared case-insensitively, type and subtype only: parameters written in the configuration
/// (`application/json; charset=utf-8`) are accepted and ignored, as Alamofire's
/// `acceptableContentTypes` ignores them.
public struct MediaRange: Sendable, Equatable, CustomStringConvertible {
    /// Lower-cased type, or `*`.
    public let type: String
    /// Lower-cased subtype, `*`, or `*+suffix`.
    public let subtype: String
    /// Parameters written after the range, as written (`charset=utf-8`); never compared. Empty when none.
    public private(set) var ignoredParameters = ""

    public var description: String { type + "/" + subtype }

    /// Parses a configured range; `nil` with a reason when malformed.
    public static func parse(_ text: String) -> Result<MediaRange, GlobError> {
        var trimmed = text.trimmingOWS().lowercased()
        var parameters = ""
        if let semicolon = trimmed.firstIndex(of: ";") {
            parameters = trimmed[trimmed.index(after: semicolon)...].trimmingOWS()
            trimmed = trimmed[..<semicolon].trimmingOWS()
            let valid = parameters.split(separator: ";").allSatisfy { parameter in
                let pair = parameter.split(separator: "=", maxSplits: 1)
                return pair.count == 2 && MediaRange.isToken(pair[0].trimmingOWS()) && !pair[1].trimmingOWS().isEmpty
            }
            guard valid else {
                return .failure(GlobError("\"\(parameters)\" is not a list of name=value parameters"))
            }
        }
        switch parseRange(trimmed) {
        case .success(var range):
            range.ignoredParameters = parameters
            return .success(range)
        case .failure(let error):
            return .failure(error)
        }
    }

    private static func parseRange(_ trimmed: String) -> Result<MediaRange, GlobError> {
        let parts = trimmed.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            return .failure(GlobError("expected type/subtype, like application/json or text/*"))
        }
        let type = String(parts[0])
        let subtype = String(parts[1])
        // `*` is a token character, but here it is only a wildcard: `*`, `type/*`, `type/*+suffix`.
        let starInSubtype = subtype.contains("*") && subtype != "*" && !subtype.hasPrefix("*+")
        if (type.contains("*") && type != "*") || starInSubtype || subtype.dropFirst().contains("*") {
            return .failure(GlobError("\"\(trimmed)\" is not a media range (wildcards: */*, type/*, type/*+suffix)"))
        }
        guard type == "*" || MediaRange.isToken(type) else {
            return .failure(GlobError("\"\(type)\" is not a valid media type name"))
        }
        if subtype == "*" || MediaRange.isToken(subtype) {
            if type == "*", subtype != "*", subtype.hasPrefix("*") {
                return .failure(GlobError("\"\(trimmed)\" is not a media range"))
            }
            return .success(MediaRange(type: type, subtype: subtype))
        }
        if subtype.hasPrefix("*+"), MediaRange.isToken(String(subtype.dropFirst(2))) {
            return .success(MediaRange(type: type, subtype: subtype))
        }
        return .failure(GlobError("\"\(subtype)\" is not a valid subtype (wildcards: *, *+suffix)"))
    }

    /// `*` as the type, `*` as the subtype, and the `+suffix` of `*+suffix`: decided once, not per response.
    private let anyType: Bool
    private let anySubtype: Bool
    private let suffix: String?

    init(type: String, subtype: String) {
        self.type = type
        self.subtype = subtype
        anyType = type == "*"
        anySubtype = subtype == "*"
        suffix = subtype.hasPrefix("*+") ? String(subtype.dropFirst()) : nil
    }

    /// Whether a response's `Content-Type`, as sent, fits: compared byte by byte, ASCII case
    /// ignored, parameters not compared, without allocating (this runs on every validated response).
    /// A malformed media type fits no range.
    public func matches(contentType: String) -> Bool {
        var text = contentType
        return text.withUTF8 { bytes in
            guard let (type, subtype) = MediaType.bounds(bytes) else { return false }
            return matches(bytes, type: type, subtype: subtype)
        }
    }

    /// The same, on the bounds ``MediaType/bounds(_:)`` found.
    func matches(_ bytes: UnsafeBufferPointer<UInt8>, type typeRange: Range<Int>, subtype subtypeRange: Range<Int>)
        -> Bool
    {
        if !anyType, !MediaRange.equalsLowered(bytes, typeRange, type) { return false }
        if anySubtype { return true }
        if let suffix {
            let count = suffix.utf8.count
            return subtypeRange.count > count
                && MediaRange.equalsLowered(bytes, (subtypeRange.upperBound - count)..<subtypeRange.upperBound, suffix)
        }
        return MediaRange.equalsLowered(bytes, subtypeRange, subtype)
    }

    /// Whether `bytes[range]` is `text` (lower-case) with ASCII case ignored.
    @inline(__always) static func equalsLowered(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ text: String
    )
        -> Bool
    {
        guard text.utf8.count == range.count else { return false }
        var index = range.lowerBound
        for expected in text.utf8 {
            let byte = bytes[index]
            if (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) != expected { return false }
            index += 1
        }
        return true
    }

    /// RFC 9110 token characters.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    /// `tchar` (RFC 9110 §5.6.2).
    @inline(__always) static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x21, 0x23...0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E...0x60, 0x7C, 0x7E:
            true
        default: false
        }
    }
}

/// A response's media type, parsed from `Content-Type` (RFC 9110 §8.3.1): lower-cased, no parameters.
struct MediaType: Equatable {
    let type: Substring
    let subtype: Substring

    var essence: String { type + "/" + subtype }

    /// Where type and subtype are in a `Content-Type` value (`OWS type "/" subtype OWS [";" …]`),
    /// case as sent; `nil` when it is not a media type. No allocation.
    static func bounds(_ bytes: UnsafeBufferPointer<UInt8>) -> (type: Range<Int>, subtype: Range<Int>)? {
        let n = bytes.count
        var i = 0
        while i < n, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
        let typeStart = i
        while i < n, bytes[i] != UInt8(ascii: "/") {
            guard MediaRange.isTokenByte(bytes[i]) else { return nil }
            i += 1
        }
        guard i < n, i > typeStart else { return nil }
        let typeEnd = i
        i += 1
        let subtypeStart = i
        while i < n, MediaRange.isTokenByte(bytes[i]) { i += 1 }
        guard i > subtypeStart else { return nil }
        let subtypeEnd = i
        while i < n, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
        guard i == n || bytes[i] == UInt8(ascii: ";") else { return nil }
        return (typeStart..<typeEnd, subtypeStart..<subtypeEnd)
    }

    /// The type and subtype of a `Content-Type` value, lower-cased (the grammar is ``bounds(_:)``'s).
    init?(_ contentType: String) {
        var text = contentType
        let essence: String? = text.withUTF8 { bytes in
            guard let (type, subtype) = MediaType.bounds(bytes) else { return nil }
            let lowered = bytes[type.lowerBound..<subtype.upperBound].map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
            return String(decoding: lowered, as: UTF8.self)
        }
        guard let essence, let slash = essence.utf8.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        type = essence[..<slash]
        subtype = essence[essence.index(after: slash)...]
    }

    /// A JSON body by the null stripper's definition: `application/json`, `*/*+json`, `text/json`, `text/javascript`.
    var isJSON: Bool {
        (type == "application" && subtype == "json") || subtype.hasSuffix("+json")
            || (type == "text" && (subtype == "json" || subtype == "javascript"))
    }
}
