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
