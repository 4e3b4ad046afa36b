import Yams

/// `faults: { latency, status, reset, timeout, seed }`.
extension RuleParser {
    static func parseFaults(_ item: ConfigLoader.Value, path: String) throws(ConfigError) -> Faults {
        var faults = Faults()
        let allowed = ["latency", "status", "reset", "timeout", "seed", "bandwidth"]
        for (name, value, line) in try mapping(item.node, path: path) {
            let entry = ConfigLoader.Value(node: value, path: path + "." + name)
            switch name {
            case "latency": faults.latency = try latency(entry)
            case "status":
                var status = Faults.Status(code: 503)
                for (key, node, keyLine) in try mapping(value, path: entry.path) {
                    let setting = ConfigLoader.Value(node: node, path: entry.path + "." + key)
                    switch key {
                    case "code": status.code = try setting.integer(in: 200...599)
                    case "retry_after": status.retryAfter = try setting.integer(in: 0...86_400)
                    case "rate": status.rate = try rate(setting)
                    default:
                        throw unknown(key, path: entry.path, line: keyLine, allowed: ["code", "retry_after", "rate"])
                    }
                }
                faults.status = status
            case "reset":
                var reset = Faults.Reset()
                for (key, node, keyLine) in try mapping(value, path: entry.path) {
                    let setting = ConfigLoader.Value(node: node, path: entry.path + "." + key)
                    switch key {
                    case "rate": reset.rate = try rate(setting)
                    case "after_bytes": reset.afterBytes = try setting.byteSize()
                    default: throw unknown(key, path: entry.path, line: keyLine, allowed: ["rate", "after_bytes"])
                    }
                }
                faults.reset = reset
            case "timeout":
                for (key, node, keyLine) in try mapping(value, path: entry.path) {
                    let setting = ConfigLoader.Value(node: node, path: entry.path + "." + key)
                    guard key == "rate" else { throw unknown(key, path: entry.path, line: keyLine, allowed: ["rate"]) }
                    faults.timeout = try rate(setting)
                }
                if faults.timeout == nil { faults.timeout = 1 }
            case "seed":
                guard let scalar = value.scalar, let seed = UInt64(scalar.string) else {
                    throw entry.fail("expected a whole number (0 to 2^64-1)")
                }
                faults.seed = seed
            case "bandwidth": faults.bandwidth = try bandwidth(entry)
            default: throw unknown(name, path: path, line: line, allowed: allowed)
            }
        }
        return faults
    }

    /// `250ms`, `1s`, or a range `200ms..800ms` (both ends included).
    private static func latency(_ entry: ConfigLoader.Value) throws(ConfigError) -> ClosedRange<Int> {
        let text = try entry.string()
        // `a..b`: split at the first dot that another dot follows.
        var parts = [Substring(text)]
        if let dot = text.indices.first(where: {
            text[$0] == "." && text.index(after: $0) < text.endIndex
                && text[text.index(after: $0)] == "."
        }) {
            parts = [text[..<dot], text[text.index(dot, offsetBy: 2)...]]
        }
        let bounds = try parts.map { part throws(ConfigError) in
            try ConfigLoader.Value(node: Node(part.trimmingOWS()), path: entry.path).milliseconds()
        }
        guard let low = bounds.first, let high = bounds.last, low <= high else {
            throw entry.fail("a latency range goes from the shorter to the longer: 200ms..800ms")
        }
        guard high <= 600_000 else { throw entry.fail("a latency above 10 minutes would only hold connections") }
        return low...high
    }

    /// `256kbit`, `2mbit`, `9600bit` (bits a second, decimal, as links are sold), or `64KiB`,
    /// `1MiB` (bytes a second); `/s` may follow. At least 100 bytes a second.
    private static func bandwidth(_ entry: ConfigLoader.Value) throws(ConfigError) -> Int {
        var written = try entry.string().trimmingOWS()
        if written.hasSuffix("/s") { written.removeLast(2) }
        var text = written.lowercased()
        if text.hasSuffix("ps") { text = String(text.dropLast(2)) + "it" }  // kbps, mbps
        let bits: [(String, Double)] = [("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1)]
        var bytes: Double?
        for (suffix, factor) in bits where text.hasSuffix(suffix) {
            if let number = Double(text.dropLast(suffix.count).trimmingOWS()), number > 0 {
                bytes = number * factor / 8
            }
            break
        }
        if bytes == nil {
            let sized = ConfigLoader.Value(node: Node(written), path: entry.path)
            bytes = (try? sized.byteSize()).map(Double.init)
        }
        guard let bytes, bytes >= 100, bytes <= 1e10 else {
            throw entry.fail("expected a rate like 256kbit, 2mbit or 64KiB (per second), at least 100 bytes a second")
        }
        return Int(bytes)
    }

    /// A share of requests: 0 to 1.
    private static func rate(_ entry: ConfigLoader.Value) throws(ConfigError) -> Double {
        guard let scalar = entry.node.scalar, let value = Double(scalar.string), value >= 0, value <= 1 else {
            throw entry.fail("expected a rate from 0 to 1 (0.05 is one request in twenty)")
        }
        return value
    }
}
