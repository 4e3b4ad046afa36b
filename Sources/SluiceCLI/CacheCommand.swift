import ArgumentParser
import Codec
import Foundation
import Logging
import Sluice

/// `sluice cache …`: look into the cache file, whether or not `sluice serve` runs.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache", abstract: "Inspect, search and purge the response cache.",
        subcommands: [List.self, Show.self, Search.self, Stats.self, Why.self, Purge.self, Verify.self, Export.self])

    /// Options every `cache` subcommand takes.
    struct Common: ParsableArguments {
        @OptionGroup var options: ConfigOptions
        @Flag(name: .long, help: "Machine-readable JSON instead of a table.")
        var json = false

        func inspector(writable: Bool = false) throws -> CacheInspector {
            let (configuration, _) = try options.load()
            guard FileManager.default.fileExists(atPath: configuration.cache.path) else {
                throw CommandFailure.noInput(
                    "no cache at \(configuration.cache.path) (cache.path): \(options.elsewhereHint)")
            }
            do {
                return try CacheInspector(settings: configuration.cache, writable: writable)
            } catch {
                throw CommandFailure.failed("cannot open \(configuration.cache.path): \(error)")
            }
        }
    }

    static var now: Double { Date().timeIntervalSince1970 }

    static func orNull(_ value: Any?) -> Any { value ?? NSNull() }

    static func printJSON(_ value: Any) {
        let data =
            (try? JSONSerialization.data(
                withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]))
            ?? Data("null".utf8)
        print(String(decoding: data, as: UTF8.self))
    }

    static func date(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }

    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    static func freshness(_ entry: CacheInspector.Entry) -> String {
        entry.isFresh ? "fresh \(entry.lifetime - entry.age)s" : "stale \(entry.age - entry.lifetime)s"
    }

    static func object(_ entry: CacheInspector.Entry, headers: Bool, adding extra: [String: Any] = [:]) -> Any {
        let text = entry.json(headers: headers).json
        guard var object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            return NSNull()
        }
        object.merge(extra) { _, new in new }
        return object
    }

    /// Rows as an aligned text table.
    static func table(_ header: [String], _ rows: [[String]]) {
        var widths = header.map(\.count)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        print(line(header))
        for row in rows { print(line(row)) }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List stored responses.")
        @OptionGroup var common: Common
        @Option(help: "Only this host.") var host: String?
        @Option(help: "Only URLs matching this glob (* any run, ? one character).") var url: String?
        @Option(help: "Only this status.") var status: Int?
        @Option(name: .customLong("content-type"), help: "Only this media type (parameters ignored).")
        var contentType: String?
        @Flag(help: "Only stale entries.") var stale = false
        @Flag(help: "Only fresh entries.") var fresh = false
        @Option(help: "recent, size, hits or age.") var sort = "recent"
        @Option(help: "At most this many.") var limit = 100

        func validate() throws {
            guard CacheInspector.Filter.Order(rawValue: sort) != nil else {
                throw ValidationError("--sort takes recent, size, hits or age")
            }
            if stale, fresh { throw ValidationError("--stale and --fresh exclude each other") }
        }

        func run() throws {
            var filter = CacheInspector.Filter()
            filter.host = host
            filter.url = url
            filter.status = status
            filter.contentType = contentType
            filter.freshness = stale ? .stale : fresh ? .fresh : .any
            filter.order = CacheInspector.Filter.Order(rawValue: sort) ?? .recent
            filter.limit = limit
            let entries = try common.inspector().list(filter, now: CacheCommand.now)
            let shared = try SharedView(common, keys: entries.map(\.key))
            if common.json {
                return CacheCommand.printJSON(
                    entries.map { CacheCommand.object($0, headers: false, adding: shared.members($0.key)) })
            }
            CacheCommand.table(
                ["ID", "STATUS", "SIZE", "HITS", "FRESHNESS", "TYPE"] + (shared.isOff ? [] : ["TIERS"]) + ["URL"],
                entries.map {
                    [
                        String($0.id), String($0.status), CacheCommand.bytes($0.size), String($0.hits),
                        CacheCommand.freshness($0), $0.contentType.map(CacheInspector.mediaType) ?? "-",
                    ] + (shared.isOff ? [] : [shared.text($0.key)]) + [$0.url]
                })
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what is stored for a URL (every variant) or an entry number.")
        @OptionGroup var common: Common
        @Argument(help: "A URL or an entry number (from list).") var target: String
        @Flag(help: "Print the header fields.") var headers = false
        @Flag(help: "Print the body (decoded when compressed).") var body = false
        @Flag(help: "Write the stored body's exact bytes to stdout, nothing else.") var raw = false
        @Flag(help: "Pretty-print a JSON body.") var pretty = false

        func run() throws {
            let inspector = try common.inspector()
            let entries = try inspector.entries(for: target, now: CacheCommand.now)
            guard let first = entries.first else { return try showShared() }
            if raw {
                try inspector.body(of: first.id) { bytes in FileHandle.standardOutput.write(Data(bytes)) }
                return
            }
            let shared = try SharedView(common, keys: entries.map(\.key))
            if common.json {
                var objects = entries.map {
                    CacheCommand.object($0, headers: true, adding: shared.members($0.key)) as? [String: Any] ?? [:]
                }
                if body || pretty {
                    for index in objects.indices {
                        objects[index]["body"] = String(
                            decoding: try decodedBody(inspector, entries[index]), as: UTF8.self)
                    }
                }
                return CacheCommand.printJSON(objects)
            }
            for entry in entries {
                print("\(entry.method) \(entry.url)  (entry \(entry.id))")
                print("  status     \(entry.status) \(entry.reason)")
                print("  stored     \(CacheCommand.date(entry.responseTime)), \(CacheCommand.bytes(entry.size))")
                print(
                    "  freshness  \(CacheCommand.freshness(entry)) (age \(entry.age)s, lifetime \(entry.lifetime)s from \(entry.lifetimeSource))"
                )
                let validators = [
                    entry.headers["etag"].map { "ETag \($0)" },
                    entry.headers["last-modified"].map { "Last-Modified \($0)" },
                ]
                .compactMap { $0 }
                print(
                    "  validators \(validators.isEmpty ? "none (stale means a full fetch)" : validators.joined(separator: ", "))"
                )
                if !entry.variant.isEmpty {
                    print("  variant    \(entry.variant.replacingOccurrences(of: "\n", with: "; "))")
                }
                print("  hits       \(entry.hits), last \(CacheCommand.date(entry.lastAccess))")
                print("  rule       \(entry.rule ?? "defaults")")
                if let contract = entry.contract { print("  contract   \(contract)") }
                if !shared.isOff {
                    if case .unknown(let reason) = shared {
                        print("  tiers      local; the shared tier did not say (\(reason))")
                    } else {
                        print("  tiers      \(shared.tiers(entry.key).joined(separator: " and "))")
                    }
                }
                if headers || body || pretty {
                    print("")
                    for field in entry.headers { print("\(field.name): \(field.value)") }
                }
                if body || pretty {
                    print("")
                    print(String(decoding: try decodedBody(inspector, entry), as: UTF8.self))
                }
                print("")
            }
        }

        /// The body as the client would read it: content coding undone (bounded), JSON pretty if asked.
        func decodedBody(_ inspector: CacheInspector, _ entry: CacheInspector.Entry) throws -> [UInt8] {
            var bytes: [UInt8] = []
            try inspector.body(of: entry.id) { bytes.append(contentsOf: $0) }
            let encoding = entry.headers["content-encoding"]?.trimmingCharacters(in: .whitespaces).lowercased()
            if let encoding, let coding = ContentCoding(token: encoding) {
                bytes = (try? coding.decode(bytes, limit: 256 << 20)) ?? bytes
            }
            // Key order and number text as the origin sent them; only the whitespace changes.
            if pretty, let indented = JSONPrettyPrinter.format(bytes) { bytes = indented }
            return bytes
        }
    }

    struct Search: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find stored responses whose URL, header fields or body contain TEXT.")
        @OptionGroup var common: Common
        @Argument(help: "The text (URL and headers: any case; bodies: exact bytes).") var text: String
        @Option(name: .customLong("in"), help: "url, headers or body; repeat for several (default: all three).")
        var places: [String] = []
        @Option(help: "At most this many.") var limit = 100

        func validate() throws {
            for place in places where CacheInspector.Place(rawValue: place) == nil {
                throw ValidationError("--in takes url, headers or body, not \(place)")
            }
        }

        func run() throws {
            let chosen = Set(places.compactMap(CacheInspector.Place.init(rawValue:)))
            let found = try common.inspector().search(
                text, in: chosen.isEmpty ? Set(CacheInspector.Place.allCases) : chosen, limit: limit,
                now: CacheCommand.now
            ) { coding, bytes in
                ContentCoding(token: coding.trimmingCharacters(in: .whitespaces).lowercased()).flatMap {
                    try? $0.decode(bytes, limit: Int(CacheInspector.decodeLimit) * 8)
                }
            }
            if common.json {
                return CacheCommand.printJSON(
                    found.map { match in
                        var object = CacheCommand.object(match.entry, headers: false) as? [String: Any] ?? [:]
                        object["found_in"] = match.places.map(\.rawValue)
                        return object
                    })
            }
            CacheCommand.table(
                ["ID", "STATUS", "SIZE", "FOUND IN", "URL"],
                found.map {
                    [
                        String($0.entry.id), String($0.entry.status), CacheCommand.bytes($0.entry.size),
                        $0.places.map(\.rawValue).joined(separator: ","), $0.entry.url,
                    ]
                })
        }
    }

    struct Why: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Why the last response for a URL was (not) stored.")
        @OptionGroup var common: Common
        @Argument(help: "The URL, as the client asked for it.") var url: String

        func run() throws {
            let inspector = try common.inspector()
            let decision = try inspector.decision(for: url)
            let stored = try inspector.entries(for: url, now: CacheCommand.now)
            if common.json {
                return CacheCommand.printJSON([
                    "url": url, "decided": CacheCommand.orNull(decision.map { CacheCommand.date($0.time) }),
                    "stored": CacheCommand.orNull(decision?.stored), "reason": CacheCommand.orNull(decision?.reason),
                    "entries": stored.map { $0.id },
                ])
            }
            guard let decision else {
                print(
                    "no decision on record for \(url) (never fetched through this cache, or decided before the newest ones kept: 100,000, fewer in a small cache)"
                )
                return
            }
            let when = CacheCommand.date(decision.time)
            if decision.stored {
                print("stored at \(when)" + (stored.isEmpty ? "; since removed (purged, evicted or invalidated)" : ""))
            } else {
                print("not stored at \(when): \(decision.reason ?? "unknown") — \(Self.explain(decision.reason))")
            }
        }

        static func explain(_ reason: String?) -> String {
            switch reason {
            case "no-store": "Cache-Control: no-store in the request or the response"
            case "private": "Cache-Control: private or Set-Cookie (shared cache)"
            case "authorization": "the request had Authorization and the response did not allow sharing it"
            case "vary-star": "Vary: * (never reusable)"
            case "no-freshness": "no freshness information and no validators"
            case "too-large": "larger than cache.max_entry_size"
            case "partial": "a Range request or a 206"
            case "status": "a status that is not stored"
            case "validation": "the response failed its rule's accept checks"
            case "rule": "the rule (cache: false) or the will-cache hook refused it"
            case "incomplete": "the transfer ended early or the body did not match its length"
            case "method": "not a GET"
            default: "see the Cache-Status table in docs/cache.md"
            }
        }
    }

    struct Purge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove stored responses (every variant); a running proxy sees it at once.")
        @OptionGroup var common: Common
        @Flag(help: "Everything.") var all = false
        @Option(help: "Every entry of this host.") var host: String?
        @Option(help: "Every entry whose URL matches this glob.") var url: String?
        @Argument(help: "A URL or an entry number.") var target: String?

        func validate() throws {
            let chosen = [all, host != nil, url != nil, target != nil].filter { $0 }.count
            guard chosen == 1 else { throw ValidationError("say what to purge: --all, --host H, --url GLOB or a URL") }
        }

        func run() throws {
            let selector: CacheInspector.Selector =
                all ? .all : host.map { .host($0) } ?? url.map { .urlGlob($0) } ?? .keyOrURL(target ?? "")
            let inspector = try common.inspector(writable: true)
            let keys = CacheInspector.keys(of: selector, in: inspector, now: CacheCommand.now)
            let (entries, bytes, hidden) = try inspector.purge(selector)
            // With a shared tier, the purge reaches it and every instance (announced there).
            var shared: String?
            var unreached = false
            if let settings = try common.options.load().0.cache.sharedTier {
                let failure = SharedTier.purgeFromCommandLine(
                    selector, keys: keys, settings: settings, logger: Logger(label: "sluice"))
                shared = failure.map { "not reached: \($0)" } ?? "purged and announced"
                unreached = failure != nil
            }
            if common.json {
                CacheCommand.printJSON([
                    "purged": entries, "bytes": bytes, "reading": hidden, "shared": CacheCommand.orNull(shared),
                ])
            } else {
                // Entries the running proxy is still sending are hidden now and go when those hits end.
                let reading =
                    hidden == 0
                    ? "" : "; \(hidden) still being sent by the running proxy, hidden now and removed when sent"
                print(
                    "purged \(entries) entr\(entries == 1 ? "y" : "ies"), \(CacheCommand.bytes(bytes))" + reading
                        + (shared.map { "; shared tier: \($0)" } ?? ""))
            }
            // The local file is purged, the tier (and the instances it would have told) not:
            // nothing keeps this purge for later. Exit 75 (EX_TEMPFAIL) so that a script sees it.
            guard unreached else { return }
            FileHandle.standardError.write(
                Data(
                    "sluice: the shared tier was not reached: run the purge again when it is back, or purge through a running proxy's admin API, which carries it out when the tier returns\n"
                        .utf8))
            throw ExitCode(75)
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the file's integrity and every entry's body length.")
        @OptionGroup var common: Common

        func run() throws {
            let report = try common.inspector().verify()
            if common.json {
                CacheCommand.printJSON([
                    "integrity": report.integrity, "checked": report.checked, "sound": report.isSound,
                    "damaged": report.damaged.map { ["id": $0.id, "url": $0.url, "problem": $0.problem] },
                    "hidden": ["entries": report.hidden.entries, "bytes": report.hidden.bytes],
                ])
            } else {
                print("integrity  \(report.integrity.joined(separator: "; "))")
                print("entries    \(report.checked) checked, \(report.damaged.count) damaged")
                for item in report.damaged { print("  \(item.id) \(item.url): \(item.problem)") }
                if report.hidden.entries > 0 {
                    print(
                        "hidden     \(report.hidden.entries) removed or unfinished, \(CacheCommand.bytes(report.hidden.bytes)) to free (when their readers end, or at the proxy's next start)"
                    )
                }
            }
            if !report.isSound { throw ExitCode(1) }
        }
    }
}
