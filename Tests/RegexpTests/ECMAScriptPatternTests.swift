import Regexp
import Testing

@Suite("ECMA-262 patterns rewritten for PCRE2")
struct ECMAScriptPatternTests {
    @Test(
        "\\s, \\S, . and \\v mean what ECMA-262 says, inside classes too",
        arguments: [
            ("^\\s$", "\u{A0}", true), ("^\\s$", "\u{2003}", true), ("^\\s$", "\u{2029}", true),
            ("^\\s$", "\u{FEFF}", true), ("^\\s$", "\u{85}", false),  // NEL is not ECMA-262 white space
            ("^\\S$", "\u{A0}", false), ("^\\S$", "x", true),
            ("^[\\s]$", "\u{3000}", true), ("^[a\\S]$", "b", true), ("^[a\\S]$", "\u{A0}", false),
            ("^[^a\\S]$", "\u{A0}", true), ("^[^a\\S]$", "a", false), ("^[^\\S]$", " ", true),
            ("^.$", "\u{2028}", false), ("^.$", "\r", false), ("^.$", "\u{85}", true),
            ("^\\v$", "\u{0B}", true), ("^\\v$", "\n", false),
            ("^\\cJ$", "\n", true), ("^\\x41\\u0042\\u{43}$", "ABC", true), ("^[\\b]$", "\u{08}", true),
            ("^[[:alpha:]]$", ":]", true),  // no POSIX classes: "[" is a member, "]" a literal
            ("^[^\\S\\r\\n]+$", "  \t", true), ("^[^\\S\\r\\n]+$", " \n", false),  // one atom, quantified
        ])
    func meaning(pattern: String, subject: String, expected: Bool) throws {
        #expect(try Pattern(pattern).search(subject) == (expected ? .match : .noMatch), "\(pattern) on \(subject)")
    }

    @Test(
        "With the u flag (the regex format), only ECMA-262 syntax is valid",
        arguments: [
            ("(?<name>x)\\k<name>", true), ("(?<=a+)b", true), ("[]", true), ("[^]", true), ("\\cA", true),
            ("a{2,3}", true), ("\\/", true), ("[\\-]", true),
            ("\\a", false), ("(?P<name>x)", false), ("(?#comment)a", false), ("(?i)abc", false),
            ("\\Aabc\\z", false), ("a{", false), ("a}", false), ("]", false), ("\\-", false), ("(a", false),
            ("a)", false), ("\\c1", false), ("\\x4", false), ("\\u12", false), ("\\01", false),
            ("*", false), ("+a", false), ("a**", false), ("a{3,1}", false), ("(?=a)*", false), ("^*", false),
            ("a|*", false), ("a*?", true), ("(a)+", true), ("a{2}?", true), ("\\d+\\b", true), ("a{1,3}", true),
            // ECMA-262's early errors (§22.2.1.1), found as PCRE2 compiles the translation.
            ("[a-\\d]", false), ("[\\w-z]", false), ("[z-a]", false), ("\\k<n>", false), ("(?<n>a)\\k<m>", false),
            ("(?<a>x)(?<a>y)", false), ("\\8", false), ("\\u{110000}", false),
            ("(a)\\1", true), ("[a-z\\d]", true), ("\\p{Lu}", true), ("(?<=ab|c)d", true),
            // PCRE2 refuses these, ECMA-262 does not: escaped surrogate pairs (one code point),
            // lone surrogates, `$` in a group name, properties newer than PCRE2's tables.
            ("\\uD83D\\uDE00", true), ("[\\uD83D\\uDE00-\\uD83D\\uDE4F]", true), ("\\uD83D", true),
            ("(?<$a>x)", true), ("\\p{Assigned}", true),
        ])
    func syntax(pattern: String, valid: Bool) {
        #expect(ECMAScriptPattern.isValid(pattern) == valid, "\(pattern)")
    }

    @Test("Schemas' own patterns keep the escapes and constructs other engines accept")
    func lenient() throws {
        #expect(try Pattern("^a\\-b\\_c$").search("a-b_c") == .match)
        #expect(try Pattern("^{x}]$").search("{x}]") == .match)
        #expect(try Pattern("(?i)^abc$").search("ABC") == .match)
        #expect(try Pattern("^(?P<n>a)(?P=n)$").search("aa") == .match)
    }
}
