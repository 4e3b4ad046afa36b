import ArgumentParser
import Foundation
import Logging
import Sluice

/// `sluice cache stats`: the file's numbers, and the shared tier's when there is one.
extension CacheCommand {
    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Entries, bytes, capacity, hits, top hosts.")
        @OptionGroup var common: Common

        func run() throws {
            let stats = try common.inspector().stats()
            let shared = try CacheCommand.sharedStats(common)
            if common.json {
                return CacheCommand.printJSON([
                    "shared": CacheCommand.orNull(shared?.json),
                    "entries": stats.entries, "bytes": stats.bytes, "capacity": stats.capacity, "hits": stats.hits,
                    "lookups": ["hits": stats.lookupHits, "misses": stats.lookupMisses],
                    "hit_ratio": CacheCommand.orNull(stats.hitRatio),
                    "oldest": CacheCommand.orNull(stats.oldest.map(CacheCommand.date)),
                    "newest": CacheCommand.orNull(stats.newest.map(CacheCommand.date)),
                    "top_hosts": stats.topHosts.map { ["host": $0.host, "entries": $0.entries, "bytes": $0.bytes] },
                    "decisions": ["stored": stats.decisionsStored, "not_stored": stats.decisionsRefused],
                ])
            }
            let used = stats.capacity > 0 ? Double(stats.bytes) * 100 / Double(stats.capacity) : 0
            print("entries    \(stats.entries)")
            print(
                "bytes      \(CacheCommand.bytes(stats.bytes)) of \(CacheCommand.bytes(stats.capacity)) (\(String(format: "%.1f", used)) %)"
            )
            print("hits       \(stats.hits) served from the file")
            let ratio = stats.hitRatio.map { String(format: "%.1f %%", $0 * 100) } ?? "-"
            print("hit ratio  \(ratio) (\(stats.lookupHits) hits, \(stats.lookupMisses) went upstream)")
            print("oldest     \(stats.oldest.map(CacheCommand.date) ?? "-")")
            print("newest     \(stats.newest.map(CacheCommand.date) ?? "-")")
            print(
                "decisions  \(stats.decisionsStored) URLs stored, \(stats.decisionsRefused) not (see: sluice cache why URL)"
            )
            for line in shared?.lines ?? [] { print(line) }
            if !stats.topHosts.isEmpty {
                print("")
                CacheCommand.table(
                    ["HOST", "ENTRIES", "BYTES"],
                    stats.topHosts.map { [$0.host, String($0.entries), CacheCommand.bytes($0.bytes)] })
            }
        }
    }

    /// The shared tier's part of `stats`, when one is configured: its text lines and its JSON.
    static func sharedStats(_ common: Common) throws -> (lines: [String], json: Any)? {
        guard let settings = try common.options.load().0.cache.sharedTier else { return nil }
        let server = SharedTier.describe(settings)
        switch SharedTier.censusFromCommandLine(settings: settings, logger: Logger(label: "sluice")) {
        case .success(let census):
            return (
                [
                    "shared     \(census.entries) entr\(census.entries == 1 ? "y" : "ies") on \(server), prefix \(settings.prefix)",
                    "           \(census.servers) server\(census.servers == 1 ? "" : "s"), \(bytes(census.memory)) used in all",
                ],
                [
                    "server": server, "prefix": settings.prefix, "entries": census.entries, "servers": census.servers,
                    "memory": census.memory,
                ]
            )
        case .failure(let failure):
            return (
                ["shared     \(server): not reached (\(failure))"],
                ["server": server, "prefix": settings.prefix, "error": failure.description]
            )
        }
    }
}
