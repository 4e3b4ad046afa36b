import ArgumentParser
import Foundation
import Sluice

/// `sluice tls passthrough list|clear`: the blind windows of clients that refused the certificate,
/// on the running proxy (through its admin API).
struct TLSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tls", abstract: "Interception state of the running proxy.", subcommands: [Passthrough.self])

    struct Passthrough: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clients tunnelled blind after refusing the certificate twice within a minute.",
            subcommands: [List.self, Clear.self])
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Each window: host, client, its TLS fingerprint (JA4), and when it ends.")
        @OptionGroup var options: ConfigOptions
        @OptionGroup var admin: AdminAddress
        @Flag(name: .long, help: "The admin API's JSON as it is.") var json = false

        func run() throws {
            let (status, body) = try admin.client(options).call("GET", "/tls/passthrough")
            guard status == 200, let entries = body as? [[String: Any]] else {
                throw CommandFailure.failed("the admin API answered \(status)")
            }
            if json {
                let data = try JSONSerialization.data(
                    withJSONObject: entries, options: [.sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            guard !entries.isEmpty else { return print("no passthrough windows: every listed host is intercepted") }
            let format = ISO8601DateFormatter()
            for entry in entries {
                let until = (entry["until"] as? Double).map { format.string(from: Date(timeIntervalSince1970: $0)) }
                print(
                    "\(entry["host"] ?? "?")\tclient \(entry["client"] ?? "?")\tfingerprint \(entry["fingerprint"] ?? "?")\tuntil \(until ?? "?") (\(entry["remaining_seconds"] ?? "?") s)"
                )
            }
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End the windows (for one host with --host): those clients are intercepted again.")
        @OptionGroup var options: ConfigOptions
        @OptionGroup var admin: AdminAddress
        @Option(name: .long, help: "Only this host's windows.") var host: String?

        func run() throws {
            let query =
                host.map { "?host=" + ($0.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? $0) } ?? ""
            let (status, body) = try admin.client(options).call("DELETE", "/tls/passthrough" + query)
            guard status == 200, let cleared = (body as? [String: Any])?["cleared"] as? Int else {
                let detail = ((body as? [String: Any])?["error"] as? String).map { ": \($0)" } ?? ""
                throw CommandFailure.failed("the admin API answered \(status)\(detail)")
            }
            print("ended \(cleared) passthrough window\(cleared == 1 ? "" : "s")")
        }
    }
}
