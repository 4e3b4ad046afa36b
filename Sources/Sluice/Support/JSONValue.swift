import Contract

/// A JSON value, written as compact text (problem bodies, the admin API, the event stream).
public indirect enum JSONValue: Sendable, Equatable {
    case string(String)
    case number(Int)
    case double(Double)
    case bool(Bool)
    case null
    case strings([String])
    case array([JSONValue])
    case object([(String, JSONValue)])
    /// JSON text Sluice made itself and kept as text (a recording's breakpoint record).
    case raw(String)

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.json == rhs.json }

    /// `nil` as `null`.
    public static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

    /// The JSON text.
    public var json: String {
        switch self {
        case .string(let text): JSONText.quote(text)
        case .number(let value): String(value)
        case .double(let value): value.isFinite ? String(value) : "null"
        case .bool(let value): value ? "true" : "false"
        case .null: "null"
        case .strings(let items): "[" + items.map(JSONText.quote).joined(separator: ",") + "]"
        case .array(let items): "[" + items.map(\.json).joined(separator: ",") + "]"
        case .object(let members):
            "{" + members.map { JSONText.quote($0.0) + ":" + $0.1.json }.joined(separator: ",") + "}"
        case .raw(let text): text
        }
    }
}

/// Minimal JSON text helpers.
enum JSONText {
    /// A JSON string literal for `text`.
    static func quote(_ text: String) -> String { Contract.Value.quoted(text) }
}
