/// ECMA-262 patterns (read with the `u` flag, as JSON Schema reads `pattern`) rewritten for
/// PCRE2 where the two disagree, and checked for ECMA-262 syntax.
///
/// PCRE2 alone differs in what `\s`, `\S` and `.` match (ECMA-262 §22.2.2.9: White_Space and
/// line terminators, U+FEFF included, U+0085 not) and in `\v` (a class in PCRE2, U+000B in
/// ECMA-262); it also accepts constructs ECMA-262 does not have (`(?P<n>…)`, `(?#…)`, `(?i)`,
/// `\a`, `\e`, `\A`, `\Z`, `\Q…\E`, POSIX classes).
public enum ECMAScriptPattern {
    /// Whether `source` is an ECMA-262 pattern with the `u` flag (the `regex` format). Syntax
    /// only: a variable-width lookbehind (ES2018) is valid here even where PCRE2 cannot run it.
    public static func isValid(_ source: String) -> Bool {
        guard let translated = try? translate(source, strict: true) else { return false }
        // What the reader lets through, PCRE2 checks as ECMA-262's early errors would.
        return Pattern.compileError(translated: translated) == nil
    }

    /// The PCRE2 source with the same meaning.
    /// - Parameters:
    ///   - strict: refuse what the `u` flag refuses (identity escapes of letters, a lone `{`,
    ///     `}` or `]`). Off for schemas' own patterns: many documents were written for engines
    ///     without the `u` flag, and those escapes keep their plain meaning there.
    public static func translate(_ source: String, strict: Bool) throws(PatternError) -> String {
        var reader = Reader(scalars: Array(source.unicodeScalars), strict: strict)
        guard strict else {
            // A pattern that is not ECMA-262 at all (`(?i)`, `(?P<n>…)`, `\x4`) is left to PCRE2
            // as it is, as before: documents written for other engines keep loading.
            return (try? reader.pattern()) ?? source
        }
        return try reader.pattern()
    }

    /// ECMA-262's WhiteSpace and LineTerminator code points, as class members.
    static let whiteSpace =
        #"\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}"#

    private struct Reader {
        let scalars: [Unicode.Scalar]
        let strict: Bool
        var index = 0
        var out = ""

        init(scalars: [Unicode.Scalar], strict: Bool) {
            self.scalars = scalars
            self.strict = strict
        }

        func fail(_ message: String) -> PatternError { PatternError(message: message, offset: index) }

        func peek(_ offset: Int = 0) -> Unicode.Scalar? {
            index + offset < scalars.count ? scalars[index + offset] : nil
        }

        mutating func pattern() throws(PatternError) -> String {
            // Open groups: whether each is an assertion (a lookaround: no quantifier with `u`).
            var groups: [Bool] = []
            // Whether a quantifier may follow: after an atom, not after `(`, `|`, `^`, `$`, an
            // assertion or another quantifier (ECMA-262 §22.2.1 with the `u` flag).
            var quantifiable = false
            var afterQuantifier = false
            while let scalar = peek() {
                let wasAfterQuantifier = afterQuantifier
                afterQuantifier = false
                switch scalar {
                case "\\":
                    let next = peek(1)
                    try escape(inClass: false)
                    quantifiable = next != "b" && next != "B"
                case ".":
                    out += #"[^\n\r\x{2028}\x{2029}]"#
                    index += 1
                    quantifiable = true
                case "[":
                    try characterClass()
                    quantifiable = true
                case "(":
                    groups.append(try group())
                    quantifiable = false
                case ")":
                    guard let assertion = groups.popLast() else { throw fail("unmatched )") }
                    out += ")"
                    index += 1
                    quantifiable = !assertion
                case "|", "^", "$":
                    out.unicodeScalars.append(scalar)
                    index += 1
                    quantifiable = false
                case "*", "+", "?":
                    if scalar == "?" && wasAfterQuantifier {
                        out += "?"  // lazy
                        index += 1
                        quantifiable = false
                        continue
                    }
                    guard quantifiable || !strict else { throw fail("nothing to repeat") }
                    out.unicodeScalars.append(scalar)
                    index += 1
                    quantifiable = false
                    afterQuantifier = true
                case "{":
                    if let (length, bounds) = quantifier() {
                        guard quantifiable || !strict else { throw fail("nothing to repeat") }
                        guard bounds || !strict else { throw fail("numbers out of order in {} quantifier") }
                        out += text(scalars[index..<(index + length)])
                        index += length
                        quantifiable = false
                        afterQuantifier = true
                    } else {
                        guard !strict else { throw fail("a lone { (escape it)") }
                        out += "\\{"
                        index += 1
                        quantifiable = true
                    }
                case "}", "]":
                    guard !strict else { throw fail("a lone \(scalar) (escape it)") }
                    out += "\\" + String(scalar)
                    index += 1
                    quantifiable = true
                default:
                    out.unicodeScalars.append(scalar)
                    index += 1
                    quantifiable = true
                }
            }
            guard groups.isEmpty else { throw fail("missing )") }
            return out
        }

        /// `{n}`, `{n,}`, `{n,m}`: its length from here and whether its bounds are in order; `nil`
        /// when this is no quantifier.
        func quantifier() -> (length: Int, ordered: Bool)? {
            guard let length = quantifierLength() else { return nil }
            let body = text(scalars[(index + 1)..<(index + length - 1)])
            let parts = body.split(separator: ",", omittingEmptySubsequences: false)
            if parts.count == 2, let low = Int(parts[0]), let high = Int(parts[1]) { return (length, low <= high) }
            return (length, true)
        }

        /// `{n}`, `{n,}`, `{n,m}`: its length from here, or `nil` when this is no quantifier.
        func quantifierLength() -> Int? {
            var offset = 1
            var digits = 0
            while let scalar = peek(offset), scalar.properties.numericType == .decimal, scalar.isASCII {
                offset += 1
                digits += 1
            }
            guard digits > 0 else { return nil }
            if peek(offset) == "," {
                offset += 1
                while let scalar = peek(offset), scalar.isASCII, scalar.properties.numericType == .decimal {
                    offset += 1
                }
            }
            return peek(offset) == "}" ? offset + 1 : nil
        }

        /// Copies a group's opening; whether it is an assertion (a lookahead or lookbehind).
        mutating func group() throws(PatternError) -> Bool {
            index += 1
            guard peek() == "?" else {
                out += "("
                return false
            }
            let next = peek(1)
            switch next {
            case ":", "=", "!":
                out += "(?" + String(next!)
                index += 2
                return next != ":"
            case "<":
                if peek(2) == "=" || peek(2) == "!" {
                    out += "(?<" + String(peek(2)!)
                    index += 3
                    return true
                }
                var offset = 2
                var name = ""
                while let scalar = peek(offset), scalar != ">" {
                    guard
                        scalar.properties.isAlphabetic || scalar == "_" || scalar == "$"
                            || (!name.isEmpty && scalar.properties.numericType != nil)
                    else { throw fail("a group name must be an identifier") }
                    name.unicodeScalars.append(scalar)
                    offset += 1
                }
                guard peek(offset) == ">", !name.isEmpty else { throw fail("an unfinished group name") }
                out += "(?<" + name + ">"
                index += offset + 1
                return false
            default:
                throw fail("(? must be followed by :, =, !, <=, <! or <name> in ECMA-262")
            }
        }

        mutating func escape(inClass: Bool) throws(PatternError) {
            guard let next = peek(1) else { throw fail("\\ at end of pattern") }
            index += 2
            switch next {
            case "d", "D", "w", "W", "t", "n", "r", "f":
                out += "\\" + String(next)
            case "b", "B":
                out += inClass ? (next == "b" ? #"\x{08}"# : "") : "\\" + String(next)
                if inClass && next == "B" { throw fail("\\B in a class") }
            case "s":
                out += inClass ? ECMAScriptPattern.whiteSpace : "[" + ECMAScriptPattern.whiteSpace + "]"
            case "S":
                out += "[^" + ECMAScriptPattern.whiteSpace + "]"
            case "v":
                out += #"\x{0B}"#
            case "0":
                guard !(peek()?.isASCII == true && peek()!.properties.numericType == .decimal) else {
                    throw fail("an octal escape")
                }
                out += #"\x{00}"#
            case "c":
                guard let letter = peek(), letter.isASCII, letter.properties.isAlphabetic else {
                    throw fail("\\c must be followed by a letter")
                }
                out += "\\c" + String(letter).uppercased()
                index += 1
            case "x":
                guard let high = peek(), let low = peek(1), isHex(high), isHex(low) else {
                    throw fail("\\x must be followed by two hex digits")
                }
                out += "\\x{" + String(high) + String(low) + "}"
                index += 2
            case "u":
                try unicodeEscape()
            case "p", "P":
                guard peek() == "{", let close = scalars[index...].firstIndex(of: "}") else {
                    throw fail("\\p must be followed by {property}")
                }
                out += "\\" + String(next) + text(scalars[index...close])
                index = close + 1
            case "k" where !inClass:
                guard peek() == "<", let close = scalars[index...].firstIndex(of: ">") else {
                    throw fail("\\k must be followed by <name>")
                }
                out += "\\k" + text(scalars[index...close])
                index = close + 1
            case let digit where !inClass && digit >= "1" && digit <= "9":
                out += "\\" + String(next)
                while let digit = peek(), digit.isASCII, digit.properties.numericType == .decimal {
                    out.unicodeScalars.append(digit)
                    index += 1
                }
            default:
                // Without the `u` flag, any other escape is left to PCRE2 as before (documents
                // written for other engines use `\\_`, `\\-`, even `\\A`).
                let syntax = "^$\\.*+?()[]{}|/".unicodeScalars.contains(next) || (inClass && next == "-")
                guard syntax || !strict else { throw fail("\\\(next) is not an ECMA-262 escape") }
                out += "\\" + String(next)
            }
        }

        mutating func unicodeEscape() throws(PatternError) {
            if peek() == "{" {
                guard let close = scalars[index...].firstIndex(of: "}"), close > index + 1,
                    scalars[(index + 1)..<close].allSatisfy(isHex)
                else { throw fail("\\u{…} must hold hex digits") }
                out += "\\x{" + text(scalars[(index + 1)..<close]) + "}"
                index = close + 1
                return
            }
            guard index + 4 <= scalars.count, scalars[index..<(index + 4)].allSatisfy(isHex) else {
                throw fail("\\u must be followed by four hex digits")
            }
            let unit = UInt32(text(scalars[index..<(index + 4)]), radix: 16)!
            // With the `u` flag a lead surrogate escape and a trail one are one code point
            // (ECMA-262 §22.2.1: `\uD83D\uDE00` is U+1F600), as JavaScript tools write emoji;
            // PCRE2 takes no surrogate alone.
            if (0xD800...0xDBFF).contains(unit), index + 10 <= scalars.count, scalars[index + 4] == "\\",
                scalars[index + 5] == "u", scalars[(index + 6)..<(index + 10)].allSatisfy(isHex),
                let trail = UInt32(text(scalars[(index + 6)..<(index + 10)]), radix: 16),
                (0xDC00...0xDFFF).contains(trail)
            {
                let scalar = 0x10000 + ((unit - 0xD800) << 10) + (trail - 0xDC00)
                out += "\\x{" + String(scalar, radix: 16) + "}"
                index += 10
                return
            }
            out += "\\x{" + text(scalars[index..<(index + 4)]) + "}"
            index += 4
        }

        /// `[…]`: copied with ECMA-262's escapes; `\S` inside a class (a negated set within a
        /// set, which PCRE2 cannot write) becomes an alternation around the class.
        mutating func characterClass() throws(PatternError) {
            index += 1
            let negated = peek() == "^"
            if negated { index += 1 }
            let saved = out
            out = ""
            var nonSpace = false
            while true {
                guard let scalar = peek() else { throw fail("missing ]") }
                if scalar == "]" {
                    index += 1
                    break
                }
                switch scalar {
                case "\\" where peek(1) == "S":
                    nonSpace = true
                    index += 2
                case "\\":
                    try escape(inClass: true)
                case "[":
                    out += "\\["
                    index += 1
                default:
                    out.unicodeScalars.append(scalar)
                    index += 1
                }
            }
            let members = out
            out = saved
            let space = ECMAScriptPattern.whiteSpace
            switch (nonSpace, negated, members.isEmpty) {
            case (false, false, true): out += "(?!)"
            case (false, true, true): out += #"[\s\S]"#
            case (false, _, false): out += (negated ? "[^" : "[") + members + "]"
            case (true, false, true): out += "[^" + space + "]"
            case (true, false, false): out += "(?:[" + members + "]|[^" + space + "])"
            case (true, true, true): out += "[" + space + "]"
            case (true, true, false): out += "(?:(?![" + members + "])[" + space + "])"
            }
        }

        func text(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
            var text = ""
            text.unicodeScalars.append(contentsOf: scalars)
            return text
        }

        func isHex(_ scalar: Unicode.Scalar) -> Bool {
            scalar.isASCII && (scalar.properties.isASCIIHexDigit)
        }
    }
}
