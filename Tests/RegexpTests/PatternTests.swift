import Foundation
import Regexp
import Testing

@Suite("Pattern (PCRE2, ECMA-262 dialect)")
struct PatternTests {
    @Test(
        "Unanchored search, as JSON Schema's pattern means it",
        arguments: [
            ("^[a-z]+$", "abc", true), ("^[a-z]+$", "abc1", false), ("b", "abc", true), ("^b", "abc", false),
            ("\\d{3}", "ab123", true), ("^\\d+$", "١٢٣", false),  // \d is ASCII only
            ("^.$", "é", true), ("^.$", "😀", true),  // code points, not bytes
            ("^\\u00e9$", "é", true), ("^\\u{1F600}$", "😀", true),  // ECMA escapes
            ("a$", "a\n", false),  // $ only at the very end
            ("^(a)?\\1b$", "b", true),  // an unset back-reference matches empty
            ("[]", "anything", false), ("^[^]$", "x", true),  // the empty class and its complement
            ("^\\p{L}+$", "Ünïcödé", true),
            ("^[\\uD83D\\uDE00-\\uD83D\\uDE4F]+$", "😀😃", true), ("^\\uD83D\\uDE00$", "😀", true),  // surrogate pairs
        ])
    func matches(pattern: String, subject: String, expected: Bool) throws {
        let compiled = try Pattern(pattern)
        #expect(compiled.search(subject) == (expected ? .match : .noMatch), "\(pattern) on \(subject)")
    }

    @Test("A pattern that does not compile says why and where")
    func invalid() {
        #expect {
            _ = try Pattern("^(abc$")
        } throws: { error in
            guard let error = error as? PatternError else { return false }
            return error.message.contains("missing closing parenthesis") && error.offset == 6
        }
        #expect(throws: PatternError.self) { _ = try Pattern("a{2,1}") }
    }

    @Test("Catastrophic backtracking ends at the limit, quickly, without JIT or with it")
    func catastrophic() throws {
        let evil = try Pattern("^(a+)+$", matchLimit: 100_000)
        let subject = String(repeating: "a", count: 40) + "b"
        let started = Date()
        #expect(evil.search(subject) == .limitExceeded)
        #expect(Date().timeIntervalSince(started) < 5)
        // The same pattern on a subject it matches is fine.
        #expect(evil.search(String(repeating: "a", count: 40)) == .match)
    }

    @Test("Invalid UTF-8 in the subject is its own outcome, not a crash")
    func invalidSubject() throws {
        let pattern = try Pattern("a")
        let bytes: [UInt8] = [0x61, 0xFF, 0xFE]
        #expect(bytes.withUnsafeBytes { pattern.search($0) } == .invalidSubject)
    }
}
