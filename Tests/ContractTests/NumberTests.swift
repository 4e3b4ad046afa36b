import Contract
import Testing

@Suite("Numbers written for people")
struct NumberTests {
    @Test(
        "As JavaScript writes numbers: plain from 1e-6 to below 1e21, else with an exponent; every digit kept",
        arguments: [
            ("1.5", "1.5"), ("0.15e1", "1.5"), ("-2.25", "-2.25"), ("0.001", "0.001"), ("1e-7", "1e-7"),
            ("12.5e-8", "1.25e-7"), ("1000", "1000"), ("1.0", "1"), ("100e-2", "1"), ("0.0", "0"),
            ("1e20", "100000000000000000000"), ("1e21", "1e21"), ("1.5e30", "1.5e30"), ("-3e40", "-3e40"),
            ("123456789012345678901234567890", "1.2345678901234567890123456789e29"), ("1e-6", "0.000001"),
            ("0.30000000000000000000001", "0.30000000000000000000001"),
        ])
    func description(text: String, expected: String) throws {
        let number = try #require(Number(text: Array(text.utf8)))
        #expect(number.description == expected)
        let again = try #require(Number(text: Array(number.description.utf8)))
        #expect(Number.compare(number, again) == 0, "reads back as the same value")
    }

    @Test(
        "As JSON text a whole number keeps its form: a fraction or exponent it was written with, or all its digits",
        arguments: [
            ("80", "80"), ("80.0", "80.0"), ("1e2", "100.0"), ("1E2", "100.0"), ("-0.0", "0.0"), ("1.5", "1.5"),
            ("10000000000000000000000", "10000000000000000000000"), ("1e22", "1e22"), ("80.5e1", "805.0"),
        ])
    func jsonText(text: String, expected: String) throws {
        let number = try #require(Number(text: Array(text.utf8)))
        #expect(number.jsonText == expected)
        let again = try #require(Number(text: Array(number.jsonText.utf8)))
        #expect(again == number && again.writtenWithFraction == number.writtenWithFraction)
    }
}
