import ArgumentParser
import Foundation
import Sluice

/// `sluice breakpoint add|list|rm` and `sluice paused list|resume|abort`: breakpoints and what
/// they hold, on the running proxy (through its admin API: its configuration's admin port and token).
struct BreakpointCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "breakpoint", abstract: "Breakpoints of the running proxy: where exchanges pause for you.",
        subcommands: [Add.self, List.self, Remove.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a breakpoint (or replace the one with this name).",
            discussion: """
                Examples:
                  sluice breakpoint add login --host api.example.com --path /login --method POST
                  sluice breakpoint add users --stage response --path '/v1/users/**' --status 200 --media-type application/json
                  sluice breakpoint add seven --stage both --json-pointer /id --json-equals 7
                """)
        @OptionGroup var options: ConfigOptions
        @OptionGroup var admin: AdminAddress
        @Argument(help: "Its name (letters, digits, - _ .).") var name: String
        @Option(help: "request, response, both, or messages (a WebSocket's, after its handshake matches).")
        var stage = "request"
        @Option(help: "With --stage messages: send (client to origin) or receive; both when left out.")
        var direction: String?
        @Option(name: .customLong("message-type"), help: "With --stage messages: text or binary; both when left out.")
        var messageType: String?
        @Option(help: "Host glob (api.example.com, *.example.com).") var host: String?
        @Option(help: "Path glob (/v1/**).") var path: String?
        @Option(name: .customLong("method"), help: "A method (repeat for more).") var methods: [String] = []
        @Option(name: .customLong("header"), help: "NAME=VALUE (value contained) or NAME (present); repeatable.")
        var headers: [String] = []
        @Option(name: .customLong("status"), help: "A status or class (200, 5xx); repeatable (response stage).")
        var statuses: [String] = []
        @Option(help: "The response's media type (application/json, application/*).") var mediaType: String?
        @Option(help: "The body contains this text.") var bodyContains: String?
        @Option(help: "A JSON pointer (/user/id) whose value must equal --json-equals.") var jsonPointer: String?
        @Option(help: "The JSON value at --json-pointer (7, \"text\", true).") var jsonEquals: String?

        func validate() throws {
            // Said before the proxy is asked (a usage error: exit 64).
            guard !name.isEmpty, name.utf8.allSatisfy({ RequestParser.isTokenByte($0) }) else {
                throw ValidationError("a breakpoint's name is letters, digits, - _ . (a token): \(name)")
            }
        }

        func run() throws {
            var spec: [String: Any] = ["stage": stage]
            var match: [String: Any] = [:]
            if let host { match["host"] = host }
            if let path { match["path"] = path }
            if !methods.isEmpty { match["methods"] = methods }
            if !match.isEmpty { spec["match"] = match }
            if !headers.isEmpty {
                var map: [String: String] = [:]
                for item in headers {
                    let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(
                        String.init)
                    guard let name = parts.first, !name.isEmpty else {
                        throw CommandFailure.failed("--header is NAME=VALUE or NAME, with a name")
                    }
                    map[name] = parts.count == 2 ? parts[1] : "*"
                }
                spec["headers"] = map
            }
            if !statuses.isEmpty { spec["status"] = statuses }
            if let direction { spec["direction"] = direction }
            if let messageType { spec["message_type"] = messageType }
            if let mediaType { spec["media_type"] = mediaType }
            if let bodyContains { spec["body_contains"] = bodyContains }
            if jsonPointer != nil || jsonEquals != nil {
                guard let jsonPointer, let jsonEquals else {
                    throw CommandFailure.failed("--json-pointer and --json-equals go together")
                }
                guard
                    let value = try? JSONSerialization.jsonObject(
                        with: Data(jsonEquals.utf8), options: [.fragmentsAllowed])
                else { throw CommandFailure.failed("--json-equals is a JSON value (7, \"text\", true)") }
                spec["json"] = ["pointer": jsonPointer, "equals": value]
            }
            let data = try JSONSerialization.data(withJSONObject: spec)
            let encoded = name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name
            let (status, body) = try admin.client(options).call("PUT", "/breakpoints/" + encoded, body: data)
            guard status == 200 else { throw BreakpointCommand.failure(status, body) }
            print("breakpoint \(name) set: \(BreakpointCommand.describe(body as? [String: Any] ?? [:]))")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The breakpoints in force.")
        @OptionGroup var options: ConfigOptions
        @OptionGroup var admin: AdminAddress
        @Flag(name: .long, help: "The admin API's JSON as it is.") var json = false

        func run() throws {
            let (status, body) = try admin.client(options).call("GET", "/breakpoints")
            guard status == 200, let object = body as? [String: Any], let points = object["breakpoints"] as? [Any]
            else { throw BreakpointCommand.failure(status, body) }
            if json { return print(try BreakpointCommand.text(object)) }
            guard !points.isEmpty else { return BreakpointCommand.sayNone("no breakpoints") }
            BreakpointCommand.rows(
                ["NAME", "CONDITIONS"],
                points.compactMap { $0 as? [String: Any] }.map { point in
                    ["\(point["name"] ?? "?")", BreakpointCommand.describe(point)]
                })
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm", abstract: "Remove a breakpoint (what it paused stays paused until decided).")
        @OptionGroup var options: ConfigOptions
        @OptionGroup var admin: AdminAddress
        @Argument var name: String

        func run() throws {
            let encoded = name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name
            let (status, body) = try admin.client(options).call("DELETE", "/breakpoints/" + encoded)
            guard status == 200 else { throw BreakpointCommand.failure(status, body) }
            print("breakpoint \(name) removed")
        }
    }

    /// Rows as an aligned table with its header on a terminal; in a pipe, tab-separated rows
    /// alone (`sluice paused list | cut -f1`).
    static func rows(_ header: [String], _ rows: [[String]]) {
        if isatty(1) == 1 { return CacheCommand.table(header, rows) }
        for row in rows { print(row.joined(separator: "\t")) }
    }

    /// That the list is empty, said on standard error: a pipe reads nothing.
    static func sayNone(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func failure(_ status: Int, _ body: Any?) -> CommandFailure {
        let object = body as? [String: Any]
        let detail = ((object?["error"] ?? object?["detail"]) as? String).map { ": \($0)" } ?? ""
        return CommandFailure.failed("the admin API answered \(status)\(detail)")
    }

    static func text(_ object: Any) throws -> String {
        String(
            decoding: try JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes]),
            as: UTF8.self)
    }

    /// `stage response; match {…}; status [200]` from a breakpoint's JSON.
    static func describe(_ point: [String: Any]) -> String {
        point.filter { $0.key != "name" }.sorted { $0.key < $1.key }.map { key, value in
            let shown = (try? text(value)) ?? "\(value)"
            return "\(key) \(shown.hasPrefix("\"") ? String(shown.dropFirst().dropLast()) : shown)"
        }.joined(separator: "; ")
    }
}

struct PausedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "paused", abstract: "Exchanges paused at a breakpoint on the running proxy.",
        subcommands: [List.self, Resume.self, Abort.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "What is paused, oldest first.")
        @OptionGroup var options: ConfigOptions
        @OptionGroup var admin: AdminAddress
        @Flag(name: .long, help: "The admin API's JSON as it is (each body's first KiB, and its size when cut).")
        var json = false

        func run() throws {
            let (status, body) = try admin.client(options).call("GET", "/paused")
            guard status == 200, let items = body as? [[String: Any]] else {
                throw BreakpointCommand.failure(status, body)
            }
            if json { return print(try BreakpointCommand.text(items)) }
            guard !items.isEmpty else { return BreakpointCommand.sayNone("nothing is paused") }
            BreakpointCommand.rows(
                ["ID", "PAUSED", "EXCHANGE"],
                items.map { item in
                    let request = item["request"] as? [String: Any] ?? [:]
                    let response = item["response"] as? [String: Any]
                    let what =
                        "\(request["method"] ?? "") \(request["url"] ?? "")"
                        + (response.map { " → \($0["status"] ?? "?")" } ?? "")
                    return ["\(item["id"] ?? "?")", "\(item["stage"] ?? "?") at \(item["breakpoint"] ?? "?")", what]
                })
        }
    }

    struct Resume: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Let a paused item go on, unchanged or with edits (framing fields are recomputed).")
        @OptionGroup var options: ConfigOptions
        @OptionGroup var admin: AdminAddress
        @Argument(help: "The paused item's id (sluice paused list).") var id: Int
        @Option(help: "A file holding the new body (- for standard input).") var body: String?
        @Option(name: .customLong("header"), help: "NAME=VALUE: set this field (repeatable); the others stay.")
        var headers: [String] = []
        @Option(help: "The new status (a paused response).") var status: Int?

        /// `NAME=VALUE` as its two parts, or `nil`.
        static func field(_ setting: String) -> [String]? {
            let parts = setting.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            return parts.count == 2 && !parts[0].isEmpty ? parts : nil
        }

        func validate() throws {
            for setting in headers where Self.field(setting) == nil {
                throw ValidationError("--header is NAME=VALUE, not \(setting)")
            }
        }

        func run() throws {
            let client = try admin.client(options)
            var edit: [String: Any] = [:]
            if let body {
                let data: Data
                if body == "-" {
                    data = FileHandle.standardInput.readDataToEndOfFile()
                } else {
                    guard let read = FileManager.default.contents(atPath: body) else {
                        throw CommandFailure.noInput("cannot read the body file \(body)")
                    }
                    data = read
                }
                edit["body_base64"] = data.base64EncodedString()
            }
            if let status { edit["status"] = status }
            if !headers.isEmpty || status != nil {
                let (found, item) = try client.call("GET", "/paused/\(id)")
                guard found == 200, let item = item as? [String: Any] else {
                    throw BreakpointCommand.failure(found, item)
                }
                if status != nil, item["stage"] as? String != "response" {
                    throw ValidationError(
                        "--status edits a paused response; item \(id) is a paused \(item["stage"] ?? "request")")
                }
                let message = (item["response"] ?? item["request"]) as? [String: Any] ?? [:]
                var fields = (message["headers"] as? [[String]]) ?? []
                for setting in headers {
                    guard let parts = Self.field(setting) else { throw ValidationError("--header is NAME=VALUE") }
                    fields.removeAll { $0.first?.lowercased() == parts[0].lowercased() }
                    fields.append(parts)
                }
                if !headers.isEmpty { edit["headers"] = fields }
            }
            let data = edit.isEmpty ? nil : try JSONSerialization.data(withJSONObject: edit)
            let (status, answer) = try client.call("POST", "/paused/\(id)/resume", body: data)
            guard status == 200 else { throw BreakpointCommand.failure(status, answer) }
            print("paused item \(id) resumed\(edit.isEmpty ? "" : " with edits")")
        }
    }

    struct Abort: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Abort a paused item: the client gets 502 breakpoint-aborted, or (--close) its connection closed."
        )
        @OptionGroup var options: ConfigOptions
        @OptionGroup var admin: AdminAddress
        @Argument var id: Int
        @Flag(help: "Close the client's connection instead of answering.") var close = false

        func run() throws {
            let data = try JSONSerialization.data(withJSONObject: ["close": close])
            let (status, answer) = try admin.client(options).call("POST", "/paused/\(id)/abort", body: data)
            guard status == 200 else { throw BreakpointCommand.failure(status, answer) }
            print("paused item \(id) aborted\(close ? " (connection closed)" : "")")
        }
    }
}
