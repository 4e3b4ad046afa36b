/// How a sequential media type (OAS 3.2 §4.14.1.2) lays its items out in a body.
public enum BodyFraming: Sendable, Equatable {
    /// One JSON value per line: `application/jsonl`, `application/x-ndjson` (blank lines skipped).
    case lines
    /// JSON text sequences (RFC 7464, RFC 8091): each value after a record separator (0x1E):
    /// `application/json-seq`, `*/*+json-seq`.
    case records
    /// Server-sent events (`text/event-stream`), each event read as the HTML standard reads it
    /// and modelled as an object: `data` (string), `event`, `id` (strings), `retry` (integer).
    case events

    /// The framing of a sequential media type or range (parameters and case ignored); `nil` for
    /// any other (`multipart/mixed` is sequential too, and not read here).
    public init?(media: String) {
        let bare = MediaRange.bare(media)
        switch bare {
        case "application/jsonl", "application/x-ndjson", "application/x-jsonlines", "application/jsonlines":
            self = .lines
        case "text/event-stream": self = .events
        default:
            guard bare.hasSuffix("/json-seq") || bare.hasSuffix("+json-seq") else { return nil }
            self = .records
        }
    }
}

/// What a sequential body is checked against: `schema` on the items as one array (OAS 3.2: the
/// sequence "treated as if the values were in an array"), `itemSchema` on each item on its own.
public struct SequenceSchemas: Sendable {
    public var framing: BodyFraming
    public var whole: SchemaValidator?
    public var item: SchemaValidator?

    public init(framing: BodyFraming, whole: SchemaValidator?, item: SchemaValidator?) {
        self.framing = framing
        self.whole = whole
        self.item = item
    }

    /// A validation of one body, fed as it arrives. `limit` bounds one event of an event stream
    /// (its fields are gathered before the event is checked); a larger event is not checked.
    public func validation(direction: Direction = .response, limit: Int = 1 << 20) -> SequenceValidation {
        SequenceValidation(schemas: self, direction: direction, limit: limit)
    }
}
