import Contract
import Foundation
import XCTest

/// The official JSON Schema Test Suite (its required tests), from the shared data folder next to
/// the repository (`../shared/data/json-schema-test-suite`, or `$SLUICE_JSON_SCHEMA_SUITE`).
/// Every instance is validated twice: whole, and fed one byte at a time (the streaming path).
final class JSONSchemaTestSuiteTests: XCTestCase {
    static var suite: URL? {
        if let path = ProcessInfo.processInfo.environment["SLUICE_JSON_SCHEMA_SUITE"] {
            return URL(fileURLWithPath: path)
        }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let shared = repository.deletingLastPathComponent().appendingPathComponent("shared/data/json-schema-test-suite")
        return FileManager.default.fileExists(atPath: shared.path) ? shared : nil
    }

    /// Tests Sluice does not pass, by `folder/file | group | test`, each with its reason (the
    /// docs/contracts.md lists them too).
    static let exceptions: [String: String] = [
        "draft4/optional/format/hostname.json | validation of host names | hostname with consecutive hyphens (RFC1123)":
            "hostname reserves -- in the third and fourth places for A-labels (RFC 5891 §4.2.3.1) in every dialect",
        "draft6/optional/format/hostname.json | validation of host names | hostname with consecutive hyphens (RFC1123)":
            "hostname reserves -- in the third and fourth places for A-labels (RFC 5891 §4.2.3.1) in every dialect",
        "draft7/optional/content.json":
            "contentEncoding and contentMediaType are annotations in every dialect, as 2019-09 and later make them",
    ]

    func testDraft2020_12() throws { try check("draft2020-12", .draft2020) }
    func testDraft2020_12Optional() throws { try check("draft2020-12/optional", .draft2020) }
    func testDraft2020_12Formats() throws { try check("draft2020-12/optional/format", .draft2020, formats: .assert) }
    func testDraft2019_09() throws { try check("draft2019-09", .draft2019) }
    func testDraft2019_09Optional() throws { try check("draft2019-09/optional", .draft2019) }
    func testDraft2019_09Formats() throws { try check("draft2019-09/optional/format", .draft2019, formats: .assert) }
    func testDraft7() throws { try check("draft7", .draft7) }
    func testDraft7Optional() throws { try check("draft7/optional", .draft7) }
    func testDraft7Formats() throws { try check("draft7/optional/format", .draft7, formats: .assert) }
    func testDraft6() throws { try check("draft6", .draft6) }
    func testDraft6Optional() throws { try check("draft6/optional", .draft6) }
    func testDraft6Formats() throws { try check("draft6/optional/format", .draft6, formats: .assert) }
    func testDraft4() throws { try check("draft4", .draft4) }
    func testDraft4Optional() throws { try check("draft4/optional", .draft4) }
    func testDraft4Formats() throws { try check("draft4/optional/format", .draft4, formats: .assert) }

    private func check(_ folder: String, _ dialect: Dialect, formats: FormatMode = .annotate) throws {
        let failures = try run(draft: folder, dialect: dialect, formats: formats).filter { failure in
            !Self.exceptions.keys.contains { failure.hasPrefix($0) }
        }
        XCTAssertEqual(failures, [], "\(failures.count) failures:\n" + failures.joined(separator: "\n"))
    }

    private func run(draft: String, dialect: Dialect, formats: FormatMode) throws -> [String] {
        guard let suite = Self.suite else {
            throw XCTSkip(
                "the JSON Schema Test Suite is not at ../shared/data/json-schema-test-suite (set SLUICE_JSON_SCHEMA_SUITE)"
            )
        }
        let remotes = suite.appendingPathComponent("remotes")
        let loader: SchemaRegistry.Loader = { (uri: String) throws(ContractError) -> SourceDocument? in
            let prefix = "http://localhost:1234/"
            guard uri.hasPrefix(prefix) else { return nil }
            let path = remotes.appendingPathComponent(String(uri.dropFirst(prefix.count))).path
            guard let data = FileManager.default.contents(atPath: path) else { return nil }
            return try SourceDocument.read(text: String(decoding: data, as: UTF8.self), uri: uri)
        }
        let directory = suite.appendingPathComponent("tests/\(draft)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }
            .sorted()
        XCTAssertFalse(files.isEmpty)
        var failures: [String] = []
        var count = 0
        var fast = 0
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            let document = try SourceDocument.read(text: text, uri: "file:///suite/\(file)")
            // Each test's instance as the file writes it: `1.0` and a 53-digit integer keep their
            // form (draft-04 tells integers by it), which a value read and written again loses.
            let instances = RawInstances.of(Array(text.utf8))
            for (groupIndex, group) in (document.root.items ?? []).enumerated() {
                let description = group["description"]?.string ?? "?"
                let schemaURI = "https://sluice.invalid/\(draft)/\(file)/\(groupIndex).json"
                let registry = SchemaRegistry(defaultDialect: dialect, loader: loader)
                let validator: SchemaValidator
                do {
                    registry.add(SourceDocument(uri: schemaURI, root: group["schema"] ?? .bool(true)), dialect: dialect)
                    validator = try SchemaValidator.compile(
                        schemaURI, base: schemaURI, registry: registry, formats: formats)
                } catch {
                    failures.append("\(draft)/\(file) | \(description) | does not compile: \(error)")
                    continue
                }
                for (testIndex, test) in (group["tests"]?.items ?? []).enumerated() {
                    count += 1
                    let name = "\(draft)/\(file) | \(description) | \(test["description"]?.string ?? "?")"
                    let expected = test["valid"]?.bool ?? true
                    let body = instances[groupIndex][testIndex]
                    let whole = validator.validate(body)
                    var streamed = validator.validation()
                    for byte in body { streamed.feed([byte]) }
                    let pieces = streamed.finish()
                    if whole.passed != expected {
                        failures.append(name + " | expected \(expected ? "valid" : "invalid"): \(whole.violations)")
                    } else if pieces.passed != whole.passed || pieces.total != whole.total {
                        failures.append(name + " | byte by byte differs: \(pieces.violations) vs \(whole.violations)")
                    }
                    // The fast lane and the general engine must give the same verdict, word for word.
                    if validator.usesFastLane {
                        fast += 1
                        let general = validator.validateWithGeneralEngine(body)
                        if general.violations.map(\.description) != whole.violations.map(\.description)
                            || general.total != whole.total
                        {
                            failures.append(name + " | fast lane \(whole.violations) vs general \(general.violations)")
                        }
                    }
                }
            }
        }
        print(
            "JSON Schema Test Suite \(draft): \(count - failures.count) of \(count) pass (\(fast) on the fast lane, compared with the general engine)"
        )
        return failures
    }
}

/// The `data` of every test of a suite file, as the file writes it (group by group, test by
/// test): a JSON scanner that keeps byte ranges, for this file shape only.
enum RawInstances {
    static func of(_ text: [UInt8]) -> [[[UInt8]]] {
        var scanner = Scanner(text: text)
        var groups: [[[UInt8]]] = []
        scanner.elements { scanner in
            var tests: [[UInt8]] = []
            scanner.members { scanner, key in
                guard key == "tests" else { return scanner.skipValue() }
                scanner.elements { scanner in
                    var data: [UInt8] = Array("null".utf8)
                    scanner.members { scanner, key in
                        let start = scanner.index
                        scanner.skipValue()
                        if key == "data" { data = Array(scanner.text[start..<scanner.index]) }
                    }
                    tests.append(data)
                }
            }
            groups.append(tests)
        }
        return groups
    }

    struct Scanner {
        let text: [UInt8]
        var index = 0

        mutating func space() {
            while index < text.count, [0x20, 0x09, 0x0A, 0x0D].contains(text[index]) { index += 1 }
        }

        /// Each element of the array here, read by `element`.
        mutating func elements(_ element: (inout Scanner) -> Void) {
            space()
            index += 1  // [
            space()
            while index < text.count, text[index] != 0x5D {
                element(&self)
                space()
                if text[index] == 0x2C { index += 1 }
                space()
            }
            index += 1  // ]
        }

        /// Each member of the object here: `member` reads its value.
        mutating func members(_ member: (inout Scanner, String) -> Void) {
            space()
            index += 1  // {
            space()
            while index < text.count, text[index] != 0x7D {
                let start = index
                skipValue()
                let key = String(decoding: text[(start + 1)..<(index - 1)], as: UTF8.self)
                space()
                index += 1  // :
                space()
                member(&self, key)
                space()
                if text[index] == 0x2C { index += 1 }
                space()
            }
            index += 1  // }
        }

        mutating func skipValue() {
            space()
            switch text[index] {
            case 0x22:
                index += 1
                while text[index] != 0x22 { index += text[index] == 0x5C ? 2 : 1 }
                index += 1
            case 0x7B: members { scanner, _ in scanner.skipValue() }
            case 0x5B: elements { scanner in scanner.skipValue() }
            default:
                while index < text.count, ![0x2C, 0x5D, 0x7D, 0x20, 0x09, 0x0A, 0x0D].contains(text[index]) {
                    index += 1
                }
            }
        }
    }
}
