import ArgumentParser
import Contract
import Foundation
import Sluice

/// `sluice record …`: recordings (`serve --record`) listed, shown, compared, and turned into HAR
/// and back.
struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "List, show, compare, import (HAR) and export (HAR) recordings made with `serve --record`.",
        subcommands: [List.self, Show.self, Diff.self, Import.self, Export.self])

    static func open(_ path: String) throws -> Recording {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure.noInput("no such recording: \(path)")
        }
        do {
            return try Recording.open(path)
        } catch {
            throw CommandFailure.failed(error.description)
        }
    }

    static func read(_ recording: Recording, bodies: Bool) throws -> [RecordedExchange] {
        do {
            return try recording.exchanges(bodies: bodies)
        } catch {
            throw CommandFailure.failed(error.description)
        }
    }

    static func size(_ bytes: Int64) -> String {
        bytes < 10_240 ? "\(bytes) B" : bytes < 10 << 20 ? "\(bytes >> 10) KiB" : "\(bytes >> 20) MiB"
    }

    // MARK: - list

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "One line per recorded exchange: number, method, status, size, time, URL.")

        @Argument(help: "The recording.") var file: String
        @Flag(name: .long, help: "JSON lines instead of text.") var json = false

        func run() throws {
            let recording = try RecordCommand.open(file)
            for exchange in try RecordCommand.read(recording, bodies: false) {
                if json {
                    print(
                        JSONValue.object([
                            ("id", .number(Int(exchange.id))), ("started", .double(exchange.started)),
                            ("method", .string(exchange.method)), ("url", .string(exchange.url)),
                            ("status", .number(exchange.status)), ("bytes", .number(Int(exchange.responseBodySize))),
                            ("duration_ms", .double((exchange.duration * 1e6).rounded() / 1e3)),
                            ("complete", .bool(exchange.responseComplete)), ("source", .string(exchange.source)),
                        ]).json)
                } else {
                    let cut = exchange.responseComplete ? "" : " (body cut)"
                    print(
                        "#\(exchange.id)\t\(exchange.method)\t\(exchange.status)\t\(RecordCommand.size(exchange.responseBodySize))\t\(Int((exchange.duration * 1000).rounded())) ms\t\(exchange.url)\(cut)"
                    )
                }
            }
        }
    }

    // MARK: - show

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "One recorded exchange: request and response head fields and bodies.")

        @Argument(help: "The recording.") var file: String
        @Argument(help: "The exchange's number (from `record list`).") var id: Int64
        @Flag(name: .long, help: "Write only the response body, as recorded (for a pipe).") var body = false

        func run() throws {
            let recording = try RecordCommand.open(file)
            let found: RecordedExchange?
            do {
                found = try recording.exchange(id: id)
            } catch {
                throw CommandFailure.failed(error.description)
            }
            guard let exchange = found else { throw CommandFailure.failed("\(file) has no exchange #\(id)") }
            if body {
                FileHandle.standardOutput.write(Data(exchange.responseBody))
                return
            }
            print("\(exchange.method) \(exchange.url)")
            for field in exchange.requestHeaders { print("\(field.name): \(field.value)") }
            if exchange.requestBodySize > 0 {
                print("")
                print(Show.text(exchange.requestBody, total: exchange.requestBodySize))
            }
            print("")
            print("\(exchange.status) \(exchange.reason)")
            for field in exchange.responseHeaders { print("\(field.name): \(field.value)") }
            print("")
            print(Show.text(exchange.responseBody, total: exchange.responseBodySize))
            if !exchange.responseTrailers.isEmpty {
                // After the body, as they came (gRPC's status).
                print("")
                for field in exchange.responseTrailers { print("\(field.name): \(field.value)") }
            }
            if let breakpoint = exchange.breakpoint {
                // What a person did at a breakpoint: the note, and the request as sent or the
                // response as received when either was edited.
                print("")
                print("# breakpoint: " + Show.text(Array(breakpoint.utf8), total: Int64(breakpoint.utf8.count)))
            }
        }

        /// A body as text (JSON pretty-printed) or, for bytes that are not text, its size.
        static func text(_ bytes: [UInt8], total: Int64) -> String {
            let cut = Int64(bytes.count) < total ? "\n[cut: \(bytes.count) of \(total) bytes recorded]" : ""
            if let value = try? Value.parse(bytes) { return value.pretty() + cut }
            if !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) { return text + cut }
            return "[\(total) bytes of binary content; `--body` writes them]"
        }
    }

    // MARK: - diff

    struct Diff: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What two recordings of the same flow did differently; exit status 1 when they differ.",
            discussion:
                "Requests are paired by method and URL (query order ignored) in the order they occur. `-` a request only the first made, `+` only the second, `~` answered differently: status, media type, and JSON bodies value by value, named by JSON Pointer."
        )

        @Argument(help: "The first recording.") var first: String
        @Argument(help: "The second recording.") var second: String
        @Option(name: .long, help: "A JSON Pointer not compared (repeatable), e.g. /generated_at.")
        var ignore: [String] = []

        func run() throws {
            let a = try RecordCommand.read(RecordCommand.open(first), bodies: true)
            let b = try RecordCommand.read(RecordCommand.open(second), bodies: true)
            let diff = RecordingDiff(a, b, ignoring: ignore)
            if diff.isEmpty {
                print("no differences (\(diff.compared) exchange(s) compared)")
                return
            }
            print(diff.text)
            throw ExitCode(1)
        }
    }

    // MARK: - import

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a HAR's entries (Chrome, Firefox, Charles, Proxyman, mitmproxy) to a recording, all or none."
        )

        @Argument(help: "The HAR file.") var har: String
        @Argument(help: "The recording (created when missing).") var file: String
        @Flag(
            name: .customLong("keep-credentials"),
            help: "Keep Authorization, Cookie and Set-Cookie values (redacted by default, as when recording).")
        var keepCredentials = false

        func run() throws {
            guard let data = FileManager.default.contents(atPath: har) else {
                throw CommandFailure.noInput("cannot read \(har)")
            }
            var progress = ContractCommand.Progress()
            let imported: HAR.Imported
            do {
                imported = try HAR.read(Array(data)) { index, count in
                    progress.show("read \(index) of \(count) entries")
                }
            } catch {
                progress.done()
                throw CommandFailure.failed("\(har) is not imported: \(error.description)")
            }
            progress.done()
            let existed = FileManager.default.fileExists(atPath: file)
            do {
                let recording = try Recording.openForWriting(file)
                try recording.append(keepCredentials ? imported.exchanges : imported.exchanges.map { $0.redacted() })
            } catch {
                if !existed { try? FileManager.default.removeItem(atPath: file) }
                throw CommandFailure.failed("\(har) is not imported: \(error.description)")
            }
            for skipped in imported.skipped { print("skipped \(skipped)") }
            print("imported \(imported.exchanges.count) exchange(s) from \(har) into \(file)")
        }
    }

    // MARK: - export

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write a recording as HAR 1.2.")

        @Argument(help: "The recording.") var file: String
        @Flag(name: .long, help: "HAR 1.2 (the only format; says what you get).") var har = false
        @Option(name: [.short, .long], help: "Write to this file instead of standard output.") var output: String?

        func run() throws {
            let recording = try RecordCommand.open(file)
            var progress = ContractCommand.Progress()
            progress.show("reading \(file)", force: true)
            let exchanges = try RecordCommand.read(recording, bodies: true)
            progress.done()
            let document = HAR.document(exchanges, creator: "Sluice", version: SluiceVersion.current)
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: Data(document.utf8)) else {
                    throw CommandFailure.failed("cannot write \(output)")
                }
                FileHandle.standardError.write(Data("wrote \(exchanges.count) entries to \(output)\n".utf8))
            } else {
                FileHandle.standardOutput.write(Data(document.utf8))
            }
        }
    }
}
