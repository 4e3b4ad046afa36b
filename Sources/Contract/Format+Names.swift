import IDNA

/// `hostname` and `idn-hostname` (RFC 1123, IDNA2008: RFC 5890–5893 through libidn2, with the
/// CONTEXTO and cross-label Bidi rules here), `email` and `idn-email` (RFC 5321 §4.1.2, RFC 6531).
extension Format {
    /// An ASCII host name; `xn--` labels must be valid A-labels.
    static func isHostname(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        var labels: [[Unicode.Scalar]] = []
        for label in text.split(separator: ".", omittingEmptySubsequences: false) {
            guard let scalars = asciiLabel(label) else { return false }
            labels.append(scalars)
        }
        return isBidiName(labels)
    }

    /// A host name of A-labels and U-labels, with any of the four full stops IDNA2008 treats as
    /// label separators (RFC 3490 §3.1).
    /// - Parameter normalizing: U-labels are put in NFC before they are checked (`idn-email`'s
    ///   domains; a host name's labels must already be in NFC).
    static func isIDNHostname(_ text: String, normalizing: Bool = false) -> Bool {
        guard !text.isEmpty else { return false }
        var labels: [[Unicode.Scalar]] = []
        var length = -1
        let separators: Set<Unicode.Scalar> = ["\u{2E}", "\u{3002}", "\u{FF0E}", "\u{FF61}"]
        for label in text.unicodeScalars.split(omittingEmptySubsequences: false, whereSeparator: separators.contains) {
            if label.allSatisfy(\.isASCII) {
                guard let scalars = asciiLabel(Substring(Format.text(label))) else { return false }
                labels.append(scalars)
                length += label.count + 1
                continue
            }
            let scalars = Array(label)
            guard isULabel(scalars), let ascii = IDNA.lookup(Format.text(label), normalizing: normalizing) else {
                return false
            }
            labels.append(scalars)
            length += ascii.utf8.count + 1
        }
        // The name's length is that of its ASCII form (RFC 1034 §3.1).
        return length <= 253 && isBidiName(labels)
    }

    /// An LDH label, or an A-label whose U-label is valid; its scalars (the U-label's for an
    /// A-label) for the checks across labels.
    private static func asciiLabel(_ label: Substring) -> [Unicode.Scalar]? {
        let bytes = Array(label.utf8)
        guard !bytes.isEmpty, bytes.count <= 63, bytes.first != 0x2D, bytes.last != 0x2D,
            bytes.allSatisfy({ ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D })
        else { return nil }
        guard bytes.count >= 4, bytes[2] == 0x2D, bytes[3] == 0x2D else { return Array(label.unicodeScalars) }
        // Hyphens in the third and fourth places are reserved for A-labels (RFC 5891 §4.2.3.1).
        guard bytes[0] | 0x20 == 0x78, bytes[1] | 0x20 == 0x6E, let decoded = IDNA.decode(aLabel: String(label)),
            !decoded.unicodeScalars.allSatisfy(\.isASCII)
        else { return nil }
        let scalars = Array(decoded.unicodeScalars)
        guard isULabel(scalars), IDNA.isValidLabel(decoded) else { return nil }
        return scalars
    }

    /// RFC 5891 §4.2.3.1 (hyphens) and the CONTEXTO rules of RFC 5892 Appendix A.
    static func isULabel(_ scalars: [Unicode.Scalar]) -> Bool {
        guard let first = scalars.first, let last = scalars.last, first != "-", last != "-" else { return false }
        if scalars.count >= 4, scalars[2] == "-", scalars[3] == "-" { return false }
        let arabicIndic = scalars.contains { (0x660...0x669).contains($0.value) }
        let extendedArabicIndic = scalars.contains { (0x6F0...0x6F9).contains($0.value) }
        if arabicIndic && extendedArabicIndic { return false }
        for (index, scalar) in scalars.enumerated() {
            let before = index > 0 ? scalars[index - 1] : nil
            let after = index + 1 < scalars.count ? scalars[index + 1] : nil
            switch scalar.value {
            case 0x00B7:  // MIDDLE DOT: between two "l"s (Catalan)
                guard before == "l", after == "l" else { return false }
            case 0x0375:  // GREEK LOWER NUMERAL SIGN (KERAIA): before Greek
                guard let after, isGreek(after) else { return false }
            case 0x05F3, 0x05F4:  // HEBREW GERESH, GERSHAYIM: after Hebrew
                guard let before, isHebrew(before) else { return false }
            case 0x30FB:  // KATAKANA MIDDLE DOT: in a label with Hiragana, Katakana or Han
                guard scalars.contains(where: { $0.value != 0x30FB && isJapanese($0) }) else { return false }
            default: break
            }
        }
        return true
    }

    /// RFC 5893 across the labels of a name with right-to-left labels: every label starts with a
    /// letter (not a digit), and no right-to-left label mixes European and Arabic-Indic digits.
    private static func isBidiName(_ labels: [[Unicode.Scalar]]) -> Bool {
        guard labels.contains(where: { $0.contains(where: isRightToLeft) }) else { return true }
        for label in labels {
            guard let first = label.first, !isEuropeanDigit(first), !isArabicDigit(first) else { return false }
            if label.contains(where: isRightToLeft), label.contains(where: isEuropeanDigit),
                label.contains(where: isArabicDigit)
            {
                return false
            }
        }
        return true
    }

    private static func isGreek(_ scalar: Unicode.Scalar) -> Bool {
        (0x370...0x3FF).contains(scalar.value) && !(0x3E2...0x3EF).contains(scalar.value)
            || (0x1F00...0x1FFF).contains(scalar.value)
    }

    private static func isHebrew(_ scalar: Unicode.Scalar) -> Bool {
        (0x591...0x5F4).contains(scalar.value) || (0xFB1D...0xFB4F).contains(scalar.value)
    }

    private static func isJapanese(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3041...0x309F, 0x30A0...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F: true  // Hiragana, Katakana
        case 0x2E80...0x2FDF, 0x3005, 0x3007, 0x3021...0x3029, 0x3038...0x303B, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xF900...0xFAFF, 0x20000...0x3134F:
            true  // Han
        default: false
        }
    }

    /// Scripts of Bidi class R or AL, and Arabic-Indic digits (AN): what makes a Bidi domain name.
    private static func isRightToLeft(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x6F0...0x6F9: false  // Extended Arabic-Indic digits are European numbers (EN)
        case 0x590...0x8FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x10800...0x10FFF, 0x1E800...0x1EFFF: true
        default: false
        }
    }

    private static func isEuropeanDigit(_ scalar: Unicode.Scalar) -> Bool {
        isASCIIDigit(scalar) || (0x6F0...0x6F9).contains(scalar.value)
    }

    private static func isArabicDigit(_ scalar: Unicode.Scalar) -> Bool {
        (0x660...0x669).contains(scalar.value) || scalar.value == 0x66B || scalar.value == 0x66C
    }

    /// Scalars as a string.
    static func text(_ scalars: some Sequence<Unicode.Scalar>) -> String {
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars)
        return text
    }

    // MARK: - email

    /// RFC 5321's `Mailbox`: a dot-string or quoted local part, `@`, and a host name or an
    /// address literal; `international` allows UTF-8 in the local part and U-labels in the
    /// domain (RFC 6531 §3.3).
    static func isEmail(_ text: String, international: Bool) -> Bool {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        if scalars.first == "\"" {
            index = 1
            while index < scalars.count, scalars[index] != "\"" {
                let value = scalars[index].value
                if value == 0x5C {
                    guard index + 1 < scalars.count, (0x20...0x7E).contains(scalars[index + 1].value) else {
                        return false
                    }
                    index += 2
                    continue
                }
                guard
                    value == 0x20 || value == 0x21 || (0x23...0x5B).contains(value) || (0x5D...0x7E).contains(value)
                        || (international && value > 0x7F)
                else { return false }
                index += 1
            }
            // `""` is a quoted string too (RFC 5321: `DQUOTE *QcontentSMTP DQUOTE`).
            guard index < scalars.count else { return false }
            index += 1
        } else {
            let atext = Set("!#$%&'*+-/=?^_`{|}~".unicodeScalars)
            var previousDot = true
            while index < scalars.count, scalars[index] != "@" {
                let scalar = scalars[index]
                if scalar == "." {
                    guard !previousDot else { return false }
                    previousDot = true
                } else {
                    guard
                        isASCIILetter(scalar) || isASCIIDigit(scalar) || atext.contains(scalar)
                            || (international && scalar.value > 0x7F)
                    else { return false }
                    previousDot = false
                }
                index += 1
            }
            guard index > 0, !previousDot, index <= 64 || international else { return false }
        }
        guard index < scalars.count, scalars[index] == "@" else { return false }
        let domain = Format.text(scalars[(index + 1)...])
        if domain.hasPrefix("[") && domain.hasSuffix("]") {
            let inner = domain.dropFirst().dropLast()
            if inner.hasPrefix("IPv6:") { return isIPv6(String(inner.dropFirst(5))) }
            return isIPv4(inner)
        }
        return international ? isIDNHostname(domain, normalizing: true) : isHostname(domain)
    }
}
