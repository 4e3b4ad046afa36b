import Foundation
import Yams

/// The `breakpoints.*` keys of ``ConfigLoader/keys``.
extension ConfigLoader {
    static let breakpointKeys: [Key] = [
        Key(
            path: "breakpoints.timeout", type: "duration", defaultValue: "5m",
            summary: "A paused request or response goes on unchanged after this long (logged)."
        ) {
            config, value throws(ConfigError) in
            let milliseconds = try value.milliseconds()
            guard milliseconds >= 100 else { throw value.fail("at least 100ms") }
            config.breakpoints.timeout = milliseconds
        },
        Key(
            path: "breakpoints.points", type: "list of breakpoints", defaultValue: "[]",
            summary:
                "Where exchanges pause for a person: `{name, stage: request | response | both | messages, match: {host, path, methods}, headers: {name: value | \"*\"}, status: [200, 5xx], media_type, body_contains, json: {pointer, equals}, direction: send | receive, message_type: text | binary}`; decided in the page, `POST /paused/{id}/resume | abort | answer` or `sluice paused`."
        ) {
            config, value throws(ConfigError) in
            var names = Set<String>()
            config.breakpoints.points = try value.list().map { item throws(ConfigError) in
                guard let spec = ConfigLoader.plain(item.node) as? [String: Any] else {
                    throw item.fail("a breakpoint is a mapping: {name, stage, match, …}")
                }
                switch Breakpoint.parse(spec) {
                case .success(let point):
                    guard names.insert(point.name).inserted else {
                        throw item.fail("a second breakpoint \(point.name)")
                    }
                    return point
                case .failure(let error): throw item.fail(error.message)
                }
            }
        },
    ]

    /// A YAML node as plain values (mappings, lists, text), for readers shared with JSON.
    static func plain(_ node: Node) -> Any {
        if let mapping = node.mapping {
            var object: [String: Any] = [:]
            for (key, value) in mapping { object[key.string ?? ""] = plain(value) }
            return object
        }
        if let sequence = node.sequence { return sequence.map(plain) }
        // A plain scalar is typed as YAML reads it (7, 2.5, true, null); a quoted one is text.
        guard let scalar = node.scalar else { return "" }
        if scalar.style == .plain {
            if let number = Int(scalar.string) { return number }
            if let number = Double(scalar.string), scalar.string.contains(".") { return number }
            switch scalar.string {
            case "true": return true
            case "false": return false
            case "null", "~": return NSNull()
            default: break
            }
        }
        return scalar.string
    }
}
