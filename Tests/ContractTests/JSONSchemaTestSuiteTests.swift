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
        if FileManager.default.fileExists(atPath: shared.path) { return shared }
        // A clone elsewhere on the team's machines still finds the shared copy.
        let team = URL(fileURLWithPath: "/work/shared/data/json-schema-test-suite")
        return FileManager.default.fileExists(atPath: team.path) ? team : nil
    }

    /// Draft-04 tests Sluice does not pass, with the reason (README, "Contracts").
    static let draft4Exceptions: Set<String> = []

    func testDraft2020_12() throws {
        let failures = try run(draft: "draft2020-12", dialect: .draft2020)
        XCTAssertEqual(failures, [], "\(failures.count) failures:\n" + failures.joined(separator: "\n"))
    }

    func testDraft4() throws {
        let failures = try run(draft: "draft4", dialect: .draft4).filter { !Self.draft4Exceptions.contains($0) }
        XCTAssertEqual(failures, [], "\(failures.count) failures:\n" + failures.joined(separator: "\n"))
    }

    private func run(draft: String, dialect: Dialect) throws -> [String] {
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
            for (groupIndex, group) in (document.root.items ?? []).enumerated() {
                let description = group["description"]?.string ?? "?"
                let schemaURI = "https://sluice.invalid/\(draft)/\(file)/\(groupIndex).json"
                let registry = SchemaRegistry(defaultDialect: dialect, loader: loader)
                let validator: SchemaValidator
                do {
                    registry.add(SourceDocument(uri: schemaURI, root: group["schema"] ?? .bool(true)), dialect: dialect)
                    validator = try SchemaValidator.compile(schemaURI, base: schemaURI, registry: registry)
                } catch {
                    failures.append("\(file) | \(description) | does not compile: \(error)")
                    continue
                }
                for test in group["tests"]?.items ?? [] {
                    count += 1
                    let name = "\(file) | \(description) | \(test["description"]?.string ?? "?")"
                    let expected = test["valid"]?.bool ?? true
                    let body = Array((test["data"] ?? .null).json.utf8)
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
