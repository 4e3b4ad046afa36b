/// `uri`, `uri-reference`, `iri`, `iri-reference` (the grammars of RFC 3986 §3–4 and RFC 3987
/// §2.2, read scalar by scalar) and `uri-template` (RFC 6570 §2, level 4).
extension Format {
    /// Which grammar: ASCII only (URI) or with RFC 3987's `ucschar`/`iprivate` (IRI); whether a
    /// relative reference is allowed.
    struct ReferenceGrammar {
        var international: Bool
        var relative: Bool
    }

    static func isReference(_ text: String, _ grammar: ReferenceGrammar) -> Bool {
        var scalars = Substring(text).unicodeScalars[...]
        if let hash = scalars.firstIndex(of: "#") {
            guard isQueryOrFragment(scalars[scalars.index(after: hash)...], grammar, query: false) else { return false }
            scalars = scalars[..<hash]
        }
        if let question = scalars.firstIndex(of: "?") {
            guard isQueryOrFragment(scalars[scalars.index(after: question)...], grammar, query: true) else {
                return false
            }
            scalars = scalars[..<question]
        }
        // A scheme is what comes before the first ":" when no "/" comes earlier (RFC 3986 §4.2:
        // a relative path's first segment cannot hold a ":").
        let colon = scalars.firstIndex(of: ":")
        let slash = scalars.firstIndex(of: "/")
        var hierarchy = scalars
        if let colon, slash.map({ colon < $0 }) ?? true {
            guard isScheme(scalars[..<colon]) else { return false }
            hierarchy = scalars[scalars.index(after: colon)...]
        } else if !grammar.relative {
            return false
        }
        if hierarchy.starts(with: "//".unicodeScalars) {
            let rest = hierarchy.dropFirst(2)
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            guard isAuthority(rest[..<end], grammar) else { return false }
            return isPath(rest[end...], grammar)
        }
        return isPath(hierarchy, grammar)
    }

    private static func isScheme(_ scalars: Substring.UnicodeScalarView.SubSequence) -> Bool {
        guard let first = scalars.first, isASCIILetter(first) else { return false }
        return scalars.allSatisfy { isASCIILetter($0) || isASCIIDigit($0) || $0 == "+" || $0 == "-" || $0 == "." }
    }

    /// `[ userinfo "@" ] host [ ":" port ]`.
    private static func isAuthority(_ scalars: Substring.UnicodeScalarView.SubSequence, _ grammar: ReferenceGrammar)
        -> Bool
    {
        var rest = scalars
        if let at = rest.firstIndex(of: "@") {
            let userinfo = rest[..<at]
            guard isRun(userinfo, grammar, extra: ":") else { return false }
            rest = rest[rest.index(after: at)...]
        }
        if rest.first == "[" {
            guard let close = rest.firstIndex(of: "]") else { return false }
            let literal = text(rest[rest.index(after: rest.startIndex)..<close])
            guard isIPv6(literal) || isIPvFuture(literal) else { return false }
            rest = rest[rest.index(after: close)...]
            guard rest.isEmpty || rest.first == ":" else { return false }
        } else {
            let end = rest.firstIndex(of: ":") ?? rest.endIndex
            guard isRun(rest[..<end], grammar, extra: "") else { return false }
            rest = rest[end...]
        }
        if rest.first == ":" { return rest.dropFirst().allSatisfy(isASCIIDigit) }
        return rest.isEmpty
    }

    /// `"v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )`.
    private static func isIPvFuture(_ text: String) -> Bool {
        let scalars = text.unicodeScalars
        guard scalars.first == "v" || scalars.first == "V", let dot = scalars.firstIndex(of: ".") else { return false }
        let version = scalars[scalars.index(after: scalars.startIndex)..<dot]
        let rest = scalars[scalars.index(after: dot)...]
        return !version.isEmpty && version.allSatisfy(isHexDigit) && !rest.isEmpty
            && rest.allSatisfy { isUnreserved($0) || isSubDelimiter($0) || $0 == ":" }
    }

    /// Segments of `pchar`s separated by "/".
    private static func isPath(_ scalars: Substring.UnicodeScalarView.SubSequence, _ grammar: ReferenceGrammar) -> Bool
    {
        isRun(scalars, grammar, extra: ":@/")
    }

    /// A query (where IRIs also allow `iprivate`) or a fragment.
    private static func isQueryOrFragment(
        _ scalars: Substring.UnicodeScalarView.SubSequence, _ grammar: ReferenceGrammar, query: Bool
    ) -> Bool {
        isRun(scalars, grammar, extra: ":@/?", privateUse: query)
    }

    /// `*( unreserved / pct-encoded / sub-delims / extra )`, with RFC 3987's `ucschar` in IRIs
    /// (and its `iprivate` where `privateUse` says so: queries).
    private static func isRun(
        _ scalars: Substring.UnicodeScalarView.SubSequence, _ grammar: ReferenceGrammar, extra: String,
        privateUse: Bool = false
    ) -> Bool {
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            if scalar == "%" {
                guard isPercentEncoded(scalars, at: index) else { return false }
                index = scalars.index(index, offsetBy: 3)
                continue
            }
            let allowed =
                isUnreserved(scalar) || isSubDelimiter(scalar) || extra.unicodeScalars.contains(scalar)
                || (grammar.international && (isUCSChar(scalar) || (privateUse && isPrivate(scalar))))
            guard allowed else { return false }
            index = scalars.index(after: index)
        }
        return true
    }

    private static func isPercentEncoded(_ scalars: Substring.UnicodeScalarView.SubSequence, at index: String.Index)
        -> Bool
    {
        let first = scalars.index(after: index)
        guard first < scalars.endIndex else { return false }
        let second = scalars.index(after: first)
        return second < scalars.endIndex && isHexDigit(scalars[first]) && isHexDigit(scalars[second])
    }

    static func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
        (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z")
    }

    static func isASCIIDigit(_ scalar: Unicode.Scalar) -> Bool { scalar >= "0" && scalar <= "9" }

    static func isHexDigit(_ scalar: Unicode.Scalar) -> Bool {
        isASCIIDigit(scalar) || (scalar >= "a" && scalar <= "f") || (scalar >= "A" && scalar <= "F")
    }

    private static func isUnreserved(_ scalar: Unicode.Scalar) -> Bool {
        isASCIILetter(scalar) || isASCIIDigit(scalar) || scalar == "-" || scalar == "." || scalar == "_"
            || scalar == "~"
    }

    private static func isSubDelimiter(_ scalar: Unicode.Scalar) -> Bool {
        "!$&'()*+,;=".unicodeScalars.contains(scalar)
    }

    /// RFC 3987's `ucschar`.
    static func isUCSChar(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        switch value {
        case 0xA0...0xD7FF, 0xF900...0xFDCF, 0xFDF0...0xFFEF: return true
        case 0x10000...0xEFFFD: return value & 0xFFFF <= 0xFFFD
        default: return false
        }
    }

    /// RFC 3987's `iprivate` (query only).
    static func isPrivate(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0xE000...0xF8FF, 0xF0000...0xFFFFD, 0x100000...0x10FFFD: return true
        default: return false
        }
    }

    // MARK: - uri-template

    /// RFC 6570 §2: literals and `{operator varspec,…}` expressions (prefix 1–9999, explode).
    /// An apostrophe is a literal, as RFC 6570 erratum 6937 has it (the suite agrees).
    static func isURITemplate(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "{" {
                guard let close = scalars[index...].firstIndex(of: "}") else { return false }
                guard isExpression(scalars[(index + 1)..<close]) else { return false }
                index = close + 1
                continue
            }
            if scalar == "%" {
                guard index + 2 < scalars.count, isHexDigit(scalars[index + 1]), isHexDigit(scalars[index + 2]) else {
                    return false
                }
                index += 3
                continue
            }
            let value = scalar.value
            let literal =
                value == 0x21 || (0x23...0x24).contains(value) || (0x26...0x3B).contains(value)
                || value == 0x3D || (0x3F...0x5B).contains(value) || value == 0x5D || value == 0x5F
                || (0x61...0x7A).contains(value) || value == 0x7E || isUCSChar(scalar) || isPrivate(scalar)
            guard literal else { return false }
            index += 1
        }
        return true
    }

    private static func isExpression(_ body: ArraySlice<Unicode.Scalar>) -> Bool {
        var body = body
        if let first = body.first, "+#./;?&".unicodeScalars.contains(first) { body = body.dropFirst() }
        guard !body.isEmpty else { return false }
        for varspec in body.split(separator: ",", omittingEmptySubsequences: false) {
            var name = varspec
            if name.last == "*" {
                name = name.dropLast()
            } else if let colon = name.firstIndex(of: ":") {
                let length = name[(colon + 1)...]
                guard (1...4).contains(length.count), let first = length.first, first != "0",
                    length.allSatisfy(isASCIIDigit)
                else { return false }
                name = name[..<colon]
            }
            guard isVariableName(name) else { return false }
        }
        return true
    }

    /// `varchar *( ["."] varchar )`, a varchar being ALPHA / DIGIT / "_" / pct-encoded.
    private static func isVariableName(_ name: ArraySlice<Unicode.Scalar>) -> Bool {
        guard let first = name.first, first != ".", name.last != "." else { return false }
        var index = name.startIndex
        var previousDot = false
        while index < name.endIndex {
            let scalar = name[index]
            if scalar == "." {
                guard !previousDot else { return false }
                previousDot = true
                index += 1
                continue
            }
            previousDot = false
            if scalar == "%" {
                guard index + 2 < name.endIndex, isHexDigit(name[index + 1]), isHexDigit(name[index + 2]) else {
                    return false
                }
                index += 3
                continue
            }
            guard isASCIILetter(scalar) || isASCIIDigit(scalar) || scalar == "_" else { return false }
            index += 1
        }
        return true
    }
}
