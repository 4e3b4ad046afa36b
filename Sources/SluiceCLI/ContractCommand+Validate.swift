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

        @Option(help: "An OpenAPI 3.0, 3.1 or 3.2 (or Swagger 2.0) document.") var openapi: String?
        @Option(
            help:
                "The operation whose body is validated (with --openapi): its operationId, or \"METHOD /path\" as the document writes it."
        )
        var operation: String?
        @Option(
            help:
                "The response whose body is validated (with --openapi): a status code, or a documented key (4XX, default); without it, the request body."
        )
        var status: String?
        @Option(
            name: .customLong("media-type"),
            help:
                "The body's media type (with --openapi), when the operation documents several; else application/json's schema."
        )
        var mediaType: String?
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
            if let status, Int(status).map({ !(100...599).contains($0) }) ?? !Self.isStatusKey(status) {
                throw ValidationError("--status is a status code (100 to 599), a range such as 4XX, or default")
            }
            let checker = try loadValidator(formats: mode)
            // An operation's request body (no --status): readOnly properties are not required in
            // it, writeOnly ones are (OpenAPI's Schema Object).
            let direction: Direction = openapi != nil && status == nil ? .request : .response
            let input: FileHandle
            if file == "-" {
                input = FileHandle.standardInput
            } else {
                guard let opened = FileHandle(forReadingAtPath: file) else {
                    throw CommandFailure.noInput("cannot read \(file)")
                }
                input = opened
            }
            // Read in pieces and fed as they come: memory stays the validator's, whatever the size
            // (a JSON Lines file holds one line at a time; --json verdicts are written as they come).
            var failed = 0
            var written = 0
            if json { print("[", terminator: "") }
            func verdictDone(_ verdict: Verdict, _ label: String) {
                if !verdict.passed { failed += 1 }
                report(verdict, label: label, first: written == 0)
                written += 1
            }
            if case .sequence(let schemas) = checker {
                // A sequential media type (OAS 3.2): its items found as they are read.
                var validation = schemas.validation(direction: direction, limit: Self.eventLimit)
                while let piece = Self.read(input) {
                    piece.withUnsafeBytes { validation.feed($0) }
                }
                verdictDone(validation.finish(), file == "-" ? "stdin" : file)
            } else if case .json(let validator) = checker, jsonl {
                var progress = Progress()
                var line = 0
                var pending: [UInt8] = []
                func finishLine() {
                    line += 1
                    defer { pending.removeAll(keepingCapacity: true) }
                    if pending.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { return }
                    verdictDone(validator.validate(pending, direction: direction), "line \(line)")
                    progress.show("line \(line)")
                }
                while let piece = Self.read(input) {
                    var start = piece.startIndex
                    while let newline = piece[start...].firstIndex(of: 0x0A) {
                        pending.append(contentsOf: piece[start..<newline])
                        finishLine()
                        start = newline + 1
                    }
                    pending.append(contentsOf: piece[start...])
                }
                if !pending.isEmpty { finishLine() }
                progress.done()
            } else if case .json(let validator) = checker {
                var validation = validator.validation(direction: direction)
                while let piece = Self.read(input) {
                    piece.withUnsafeBytes { validation.feed($0) }
                }
                verdictDone(validation.finish(), file == "-" ? "stdin" : file)
            }
            if json { print(written == 0 ? "]" : "\n]") }
            if failed > 0 { throw ExitCode(1) }
        }

        /// The largest event of an event stream checked (its fields are gathered before the event
        /// is checked); a file's events are the user's own, so the bound is generous.
        static let eventLimit = 64 << 20

        /// The next piece of `input` (at most 1 MiB), `nil` at its end.
        private static func read(_ input: FileHandle) -> [UInt8]? {
            let data = input.readData(ofLength: 1 << 20)
            return data.isEmpty ? nil : [UInt8](data)
        }

        /// `4XX`, `default`: the keys a Responses Object has besides codes.
        static func isStatusKey(_ key: String) -> Bool {
            let upper = key.uppercased()
            return upper == "DEFAULT"
                || (upper.count == 3 && upper.hasSuffix("XX") && ("1"..."5").contains(String(upper.prefix(1))))
        }

        private func report(_ verdict: Verdict, label: String, first: Bool) {
            if json {
                let item = Value.object([
                    ("input", .string(label)), ("valid", .bool(verdict.passed)),
                    ("violations_total", .number(Number(verdict.total))),
                    ("violations", .array(verdict.violations.map(ContractCommand.violationJSON))),
                ])
                let indented = item.pretty().split(separator: "\n", omittingEmptySubsequences: false)
                    .map { "  " + $0 }.joined(separator: "\n")
                print((first ? "\n" : ",\n") + indented, terminator: "")
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

        /// What a body is validated with: a JSON schema, or a sequence's (OAS 3.2 `itemSchema`).
        private enum Checker {
            case json(SchemaValidator)
            case sequence(SequenceSchemas)
        }

        private func loadValidator(formats: FormatMode) throws -> Checker {
            do {
                if let schema {
                    guard openapi == nil else { throw ValidationError("give --schema or --openapi, not both") }
                    return .json(
                        try SchemaValidator.load(
                            file: schema, refs: try ContractCommand.refMapping(refs), formats: formats))
                }
                guard let openapi, let operationID = operation else {
                    throw ValidationError("give --schema FILE, or --openapi FILE --operation ID [--status CODE]")
                }
                let document = try OpenAPIContract.load(
                    file: openapi, refs: try ContractCommand.refMapping(refs), formats: formats)
                let named = operationID.split(whereSeparator: \.isWhitespace).map(String.init)
                let byPath = named.count == 2 ? document.operation(method: named[0], template: named[1]) : nil
                guard let found = document.operation(id: operationID) ?? byPath else {
                    throw CommandFailure.misnamed("no operation \(operationID) in \(openapi)")
                }
                let types = document.mediaTypes(of: found, key: status)
                if let mediaType, let sequence = document.sequenceSchemas(of: found, key: status, mediaType: mediaType)
                {
                    guard !jsonl else {
                        throw ValidationError("--jsonl is for JSON bodies; \(mediaType) has items of its own")
                    }
                    return .sequence(sequence)
                }
                if let mediaType, !Contract.MediaRange.isJSON(mediaType) {
                    throw CommandFailure.misnamed(
                        "\(mediaType) is not a JSON media type: only JSON bodies (and, in OpenAPI 3.2, JSON Lines, JSON text sequences and event streams) are validated"
                    )
                }
                // Several JSON types and none is application/json: which one must be said.
                let json = types.filter { Contract.MediaRange.isJSON($0) }
                if mediaType == nil, json.count > 1,
                    !json.contains(where: { Contract.MediaRange.bare($0) == "application/json" })
                {
                    throw CommandFailure.misnamed(
                        "\(operationID) documents \(json.count) JSON media types (\(json.joined(separator: ", "))): choose one with --media-type"
                    )
                }
                let validator =
                    status.map { document.responseSchema(of: found, key: $0, mediaType: mediaType) }
                    ?? document.requestSchema(of: found, mediaType: mediaType)
                guard let validator else {
                    let which = mediaType.map { " for \($0)" } ?? ""
                    throw CommandFailure.misnamed(
                        "\(operationID) has no JSON \(status.map { "response schema for \($0)" } ?? "request body schema")\(which)"
                            + (types.isEmpty ? "" : " (documented: \(types.joined(separator: ", ")))"))
                }
                return .json(validator)
            } catch let error as ContractError {
                // A file that is not there is a missing input (66); one that does not load (a
                // syntax error, a $ref to nothing) is a failure, as `contract lint` says (1).
                let path = schema ?? openapi ?? ""
                guard FileManager.default.isReadableFile(atPath: path) else {
                    throw CommandFailure.noInput(error.description)
                }
                throw CommandFailure.failed(error.description)
            }
        }
    }
}
