import ArgumentParser
import Foundation
import Logging
import Sluice

/// Which tier holds what: `list` and `show` say whether the shared tier (`cache.shared`) has
/// each entry too.
extension CacheCommand {
    /// What the shared tier says about entries of the local file.
    enum SharedView {
        /// No shared tier is configured.
        case off
        case held(Set<String>)
        /// The tier did not answer (why).
        case unknown(String)

        init(_ common: Common, keys: [String]) throws {
            guard let settings = try common.options.load().0.cache.sharedTier else {
                self = .off
                return
            }
            switch SharedTier.holdsFromCommandLine(
                Array(Set(keys)), settings: settings, logger: Logger(label: "sluice"))
            {
            case .success(let held): self = .held(held)
            case .failure(let failure): self = .unknown(failure.description)
            }
        }

        var isOff: Bool {
            if case .off = self { return true }
            return false
        }

        /// The tiers holding an entry of the local file with this key.
        func tiers(_ key: String) -> [String] {
            guard case .held(let held) = self, held.contains(key) else { return ["local"] }
            return ["local", "shared"]
        }

        /// For a table: `local`, `local+shared`, or `local, shared?` when the tier did not answer.
        func text(_ key: String) -> String {
            if case .unknown = self { return "local, shared?" }
            return tiers(key).joined(separator: "+")
        }

        /// For JSON: `tiers`, and `shared` (`null`: not known, or no shared tier).
        func members(_ key: String) -> [String: Any] {
            switch self {
            case .off: ["tiers": tiers(key)]
            case .held: ["tiers": tiers(key), "shared": tiers(key).count == 2]
            case .unknown(let reason): ["tiers": tiers(key), "shared": NSNull(), "shared_error": reason]
            }
        }
    }
}

extension CacheCommand.Show {
    /// Nothing in this instance's file: what the shared tier holds for the URL, if one is
    /// configured and has it.
    func showShared() throws {
        let nothing = CommandFailure.failed("nothing stored for \(target)")
        guard Int64(target) == nil, let settings = try common.options.load().0.cache.sharedTier else { throw nothing }
        switch SharedTier.entryFromCommandLine(key: target, settings: settings, logger: Logger(label: "sluice")) {
        case .failure(let failure):
            throw CommandFailure.failed(
                "nothing stored for \(target) in this file; the shared tier did not say (\(failure))")
        case .success(nil):
            throw CommandFailure.failed("nothing stored for \(target), in this file or the shared tier")
        case .success(let entry?):
            if common.json {
                var object: [String: Any] = [
                    "url": entry.url, "status": entry.status, "reason": entry.reason, "size": entry.size,
                    "response_time": entry.responseTime, "variant": entry.variant, "tiers": ["shared"], "shared": true,
                ]
                if headers { object["headers"] = entry.headers.map { [$0.name, $0.value] } }
                return CacheCommand.printJSON([object])
            }
            print("GET \(entry.url)  (in the shared tier only, not in this instance's file)")
            print("  status     \(entry.status) \(entry.reason)")
            print("  stored     \(CacheCommand.date(entry.responseTime)), \(CacheCommand.bytes(Int64(entry.size)))")
            if !entry.variant.isEmpty {
                print("  variant    \(entry.variant.replacingOccurrences(of: "\n", with: "; "))")
            }
            print("  tiers      shared")
            if headers {
                print("")
                for field in entry.headers { print("\(field.name): \(field.value)") }
            }
        }
    }
}
