import Contract
import Foundation
import Testing

/// The OpenAPI Format Registry's further entries, asserted under `formats: assert`, annotations
/// otherwise; each applies to its registry base types only.
@Suite("OpenAPI Format Registry formats")
struct FormatRegistryTests {
    /// Each case: a format, an instance (JSON text), and whether it is valid.
    static let cases: [(String, String, Bool)] = [
        ("int8", "127", true), ("int8", "-128", true), ("int8", "128", false), ("int8", "1.5", false),
        ("int16", "-32768", true), ("int16", "32768", false),
        ("uint8", "255", true), ("uint8", "0", true), ("uint8", "-1", false), ("uint8", "256", false),
        ("uint16", "65535", true), ("uint16", "65536", false),
        ("uint32", "4294967295", true), ("uint32", "4294967296", false),
        ("uint64", "18446744073709551615", true), ("uint64", "18446744073709551616", false), ("uint64", "-1", false),
        ("double-int", "9007199254740991", true), ("double-int", "-9007199254740991", true),
        ("double-int", "9007199254740992", false), ("double-int", "2.5", false),
        // int64 as a string too (Google's descriptions write 64-bit integers so).
        ("int64", "\"-9223372036854775808\"", true), ("int64", "\"9223372036854775808\"", false),
        ("int64", "\"12a\"", false), ("int64", "\"+12\"", false), ("int64", "\"012\"", false),
        ("decimal", "\"-12.50\"", true), ("decimal", "\"12\"", true), ("decimal", "\"1e3\"", false),
        ("decimal", "\"12.\"", false), ("decimal", "1e400", true),
        ("decimal128", "\"1234567890123456789012345678901234\"", true),
        ("decimal128", "\"12345678901234567890123456789012345\"", false), ("decimal128", "1e6200", false),
        ("decimal128", "\"abc\"", false),
        ("base64url", "\"aGk-Lw\"", true), ("base64url", "\"aGk-Lw==\"", true), ("base64url", "\"aGk+Lw==\"", false),
        ("base64url", "\"a\"", false), ("base64url", "\"\"", true),
        ("char", "\"é\"", true), ("char", "\"ab\"", false), ("char", "\"\"", false),
        ("char", "\"e\\u0301\"", false), ("char", "\"\\r\\n\"", false),
        ("uint64", "\"18446744073709551615\"", true), ("uint64", "\"-1\"", false), ("uint64", "\"abc\"", false),
        ("decimal128", "\"NaN\"", true), ("decimal128", "\"-INF\"", true), ("decimal128", "\"nan\"", false),
        ("media-range", "\"text/html \"", false), ("media-range", "\"text/html; \"", true),
        ("date-time-local", "\"2026-02-28T23:59:59.25\"", true), ("date-time-local", "\"2026-02-29T10:00:00\"", false),
        ("date-time-local", "\"2026-02-28T10:00:00Z\"", false),
        ("time-local", "\"08:30:00\"", true), ("time-local", "\"24:00:00\"", false), ("time-local", "\"08:30\"", false),
        ("http-date", "\"Sun, 06 Nov 1994 08:49:37 GMT\"", true),
        ("http-date", "\"Sunday, 06-Nov-94 08:49:37 GMT\"", true),
        ("http-date", "\"Sun Nov  6 08:49:37 1994\"", true),
        ("http-date", "\"Sun, 06 Nov 1994 08:49:37 UTC\"", false),
        ("http-date", "\"Sun, 31 Nov 1994 08:49:37 GMT\"", false),
        ("http-date", "\"1994-11-06T08:49:37Z\"", false), ("http-date", "\"sun, 06 Nov 1994 08:49:37 GMT\"", false),
        ("media-range", "\"text/html\"", true), ("media-range", "\"*/*\"", true),
        ("media-range", "\"application/*; q=0.5\"", true),
        ("media-range", "\"text/plain;charset=\\\"utf-8\\\"\"", true),
        ("media-range", "\"*/json\"", false), ("media-range", "\"text\"", false),
        ("media-range", "\"text/html;\"", true),
        ("media-range", "\"text/html; charset\"", false),
        ("sf-integer", "999999999999999", true), ("sf-integer", "1000000000000000", false),
        ("sf-decimal", "123456789012.123", true), ("sf-decimal", "1.2345", false),
        ("sf-decimal", "1234567890123", false),
        // Structured Field values as the field carries them (RFC 8941 §3.3.3, §3.3.5).
        ("sf-string", #""\"plain \\\"ascii\\\"\"""#, true), ("sf-string", "\"plain\"", false),
        ("sf-string", #""\"caf\u00e9\"""#, false), ("sf-string", #""\"a\\b\"""#, false),
        ("sf-token", "\"*foo/bar:baz\"", true), ("sf-token", "\"1abc\"", false), ("sf-token", "\"a b\"", false),
        ("sf-binary", "\":aGVsbG8=:\"", true), ("sf-binary", "\"aGVsbG8=\"", false),
        ("sf-binary", "\":aGVsbG8:\"", false),
        // A string format says nothing of numbers, a number format nothing of strings.
        ("uint8", "\"-1\"", true), ("http-date", "12", true),
    ]

    @Test("Registry formats are asserted on their types, annotations otherwise")
    func registryFormatsAreAssertedOnTheirTypes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-registry-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (index, (format, instance, valid)) in Self.cases.enumerated() {
            let path = directory.appendingPathComponent("\(index).json").path
            _ = FileManager.default.createFile(atPath: path, contents: Data(#"{"format": "\#(format)"}"#.utf8))
            let asserted = try SchemaValidator.load(file: path, formats: .assert)
            let verdict = asserted.validate(Array(instance.utf8))
            #expect(verdict.passed == valid, "\(format) \(instance): \(verdict.violations)")
            #expect(
                asserted.validateWithGeneralEngine(Array(instance.utf8)).passed == valid,
                "general: \(format) \(instance)")
            #expect(try SchemaValidator.load(file: path).validate(Array(instance.utf8)).passed, "\(format)")
        }
    }
}
