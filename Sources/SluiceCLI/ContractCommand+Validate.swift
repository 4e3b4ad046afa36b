import ArgumentParser
import Contract
import Foundation
import Sluice

/// `sluice contract validate`: one body, or one per line, against a JSON Schema or an OpenAPI
/// operation's request or response schema.
extension ContractCommand {
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate one body (or one per line with --jsonl); exit 1 on a violation.",
            discussion: """
                sluice contract validate --schema feed.schema.json body.json
                sluice contract validate --openapi shop.yaml --operation getItem --status 200 - < item.json
                sluice contract validate --openapi shop.yaml --operation 'GET /items/{itemId}' --status 200 item.json
                sluice contract validate --schema event.json --jsonl events.jsonl
                sluice contract validate --schema order.json --ref https://example.com/money.json=money.json body.json
                """)

        @Option(help: "An OpenAPI 3.0/3.1 document.") var openapi: String?
        @Option(
            help:
                "The operation whose body is validated (with --openapi): its operationId, or \"METHOD /path\" as the document writes it."
        )
        var operation: String?
        @Option(help: "The response status whose body is validated (with --openapi); without it, the request body.")
        var status: Int?
        @Option(help: "A JSON Schema file.") var schema: String?
        @Option(help: "annotate (default) or assert: whether format is checked.") var formats = "annotate"
        @Option(name: .customLong("ref"), help: "Map a remote $ref to a local file: URI=FILE (repeatable).")
        var refs: [String] = []
        @Flag(help: "One JSON body per line.") var jsonl = false
        @Flag(help: "The verdicts as JSON.") var json = false
        @Argument(help: "The body file, or - (default) for standard input.") var file = "-"

        func run() throws {
            guard let mode = FormatMode(rawValue: formats) else {
                throw ValidationError("--formats is annotate or assert")
            }
            let validator = try loadValidator(formats: mode)
            // An operation's request body (no --status): readOnly properties are not required in
            // it, writeOnly ones are (OpenAPI's Schema Object).
            let direction: Direction = openapi != nil && status == nil ? .request : .response
            let data: Data
            if file == "-" {
                data = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                guard let read = FileManager.default.contents(atPath: file) else {
                    throw CommandFailure.noInput("cannot read \(file)")
                }
                data = read
            }
            let bytes = [UInt8](data)
            var failed = 0
            var results: [Value] = []
            if jsonl {
                var progress = Progress()
                var line = 0
                for piece in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
                    line += 1
                    if piece.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
                    let verdict = validator.validate(piece, direction: direction)
                    progress.show("line \(line)")
                    if !verdict.passed { failed += 1 }
                    report(verdict, label: "line \(line)", into: &results)
                }
                progress.done()
            } else {
                let verdict = validator.validate(bytes, direction: direction)
                if !verdict.passed { failed += 1 }
                report(verdict, label: file == "-" ? "stdin" : file, into: &results)
            }
            if json { print(Value.array(results).pretty()) }
            if failed > 0 { throw ExitCode(1) }
        }

        private func report(_ verdict: Verdict, label: String, into results: inout [Value]) {
            if json {
                results.append(
                    .object([
                        ("input", .string(label)), ("valid", .bool(verdict.passed)),
                        ("violations_total", .number(Number(verdict.total))),
                        ("violations", .array(verdict.violations.map(ContractCommand.violationJSON))),
                    ]))
                return
            }
            if verdict.passed {
                print("\(label): valid")
            } else {
                print("\(label): \(verdict.total) violation\(verdict.total == 1 ? "" : "s")")
                for violation in verdict.violations { print("  \(violation)  [\(violation.schema)]") }
            }
            for note in verdict.notes { print("  note: \(note)") }
        }

        private func loadValidator(formats: FormatMode) throws -> SchemaValidator {
            do {
                if let schema {
                    guard openapi == nil else { throw ValidationError("give --schema or --openapi, not both") }
                    return try SchemaValidator.load(
                        file: schema, refs: try ContractCommand.refMapping(refs), formats: formats)
                }
                guard let openapi, let operationID = operation else {
                    throw ValidationError("give --schema FILE, or --openapi FILE --operation ID [--status CODE]")
                }
                let document = try OpenAPIContract.load(
                    file: openapi, refs: try ContractCommand.refMapping(refs), formats: formats)
                let named = operationID.split(whereSeparator: \.isWhitespace).map(String.init)
                let byPath = named.count == 2 ? document.operation(method: named[0], template: named[1]) : nil
                guard let found = document.operation(id: operationID) ?? byPath else {
                    throw CommandFailure.failed("no operation \(operationID) in \(openapi)")
                }
                let validator =
                    status.map { document.responseSchema(of: found, status: $0) }
                    ?? document.requestSchema(of: found)
                guard let validator else {
                    throw CommandFailure.failed(
                        "\(operationID) has no JSON \(status.map { "response schema for \($0)" } ?? "request body schema")"
                    )
                }
                return validator
            } catch let error as ContractError {
                throw CommandFailure.noInput(error.description)
            }
        }
    }
}
