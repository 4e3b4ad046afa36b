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

/// One sequential body's validation in progress. Items are found as the bytes pass (JSON Lines'
/// lines, JSON text sequences' records, event streams' events); each item is fed to its own
/// ``BodyValidation`` of `itemSchema` as it arrives (its violations at `/N/...`, N counting from
/// 0), and to the whole sequence's validation of `schema` between `[`, `,` and `]`. Nothing but
/// an event's fields is held.
public struct SequenceValidation {
    let schemas: SequenceSchemas
    let direction: Direction
    let limit: Int
    private var whole: BodyValidation?
    private var item: BodyValidation?
    /// Items begun so far.
    private(set) public var items = 0
    private var itemVerdict = Verdict()
    /// Where the framing is.
    private var phase = Phase.between
    private var events = EventReader()
    /// Events over `limit`, not checked.
    private(set) public var skippedEvents = 0
    /// `schema`'s `maxItems` (through `$ref`s): the item past it breaks the whole at once, not at
    /// the sequence's end (which a stream may never reach).
    private let wholeMaxItems: Int?
    /// Whether an item past `maxItems` has begun.
    private var pastMaxItems = false
    /// Where in the piece being fed the current item began (0: in an earlier piece).
    private var itemStart = 0
    /// Where in the piece being fed the last good item ended (an event stream's blank line).
    private var cleanEnd = 0
    /// Set in the `feed` in which the first violation appeared: how many of that piece's bytes
    /// come before the item that broke (whole items and what lies between them).
    public private(set) var cleanPrefix: Int?
    private var broken = false
    /// The last byte of the item in progress (a JSON text sequence's last number must end with
    /// its line feed).
    private var lastItemByte: UInt8 = 0

    private enum Phase {
        /// Between items (blank lines, a record's leading whitespace).
        case between
        /// After a record separator, before its value's first byte.
        case recordStart
        /// Inside an item's bytes.
        case inItem
        /// Text before the first record separator (not a record): skipped to the next one.
        case outside
    }

    init(schemas: SequenceSchemas, direction: Direction, limit: Int) {
        self.schemas = schemas
        self.direction = direction
        self.limit = limit
        if let schema = schemas.whole {
            var validation = schema.validation(direction: direction)
            validation.feed(Self.open)
            whole = validation
        }
        wholeMaxItems = schemas.whole?.rootMaxItems
    }

    private static let open: [UInt8] = [0x5B]
    private static let comma: [UInt8] = [0x2C]
    private static let close: [UInt8] = [0x5D]

    /// The violations so far: the items' (the one in progress too) and the whole sequence's, and
    /// an item past `maxItems` (found at once; said by the whole's own check at the end).
    public var verdictSoFar: Verdict {
        var verdict = itemVerdict
        if let item { verdict.merge(Self.relocated(item.verdictSoFar, to: items)) }
        let wholeSoFar = whole?.verdictSoFar ?? Verdict()
        verdict.merge(wholeSoFar)
        if pastMaxItems, let maximum = wholeMaxItems,
            !wholeSoFar.violations.contains(where: { $0.keyword == "maxItems" })
        {
            verdict.add(
                Violation(
                    pointer: "", keyword: "maxItems", expected: "at most \(maximum) items", found: "more",
                    schema: schemas.whole?.location ?? ""))
        }
        return verdict
    }

    /// Whether any violation was found so far (cheap: no verdict is made).
    public var hasViolations: Bool {
        itemVerdict.total > 0 || (item?.verdictSoFar.total ?? 0) > 0 || (whole?.verdictSoFar.total ?? 0) > 0
            || pastMaxItems
    }

    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        itemStart = 0
        cleanEnd = 0
        switch schemas.framing {
        case .lines: feedLines(bytes)
        case .records: feedRecords(bytes)
        case .events:
            var reader = events
            events = EventReader()
            reader.feed(bytes, limit: limit) { event, end in
                switch event {
                case .event(let json):
                    self.itemStart = self.cleanEnd
                    json.withUnsafeBytes { self.oneItem($0) }
                    if !self.broken { self.cleanEnd = end }
                case .tooLarge:
                    // It keeps its place: the next event is still the one after it.
                    self.skippedEvents += 1
                    self.items += 1
                }
            }
            events = reader
        }
    }

    /// After an item's bytes: the first violation marks where the piece's clean bytes end.
    private mutating func noteBroken() {
        guard !broken, hasViolations else { return }
        broken = true
        cleanPrefix = itemStart
    }

    public mutating func feed(_ bytes: [UInt8]) { bytes.withUnsafeBytes { feed($0) } }

    /// The end of the body: the verdict.
    public mutating func finish() -> Verdict {
        if case .inItem = phase {
            // RFC 7464 §2.4: a last number or literal not followed by whitespace may be cut short.
            if schemas.framing == .records, !Self.isBlank(lastItemByte), lastItemByte != 0x0A,
                lastItemByte != 0x7D, lastItemByte != 0x5D, lastItemByte != 0x22
            {
                itemVerdict.add(
                    Violation(
                        pointer: "/\(items)", keyword: "json", expected: "a line feed after the last JSON text",
                        found: "a number or literal at the end of the sequence (it may be cut short: RFC 7464 §2.4)",
                        schema: ""))
            }
            endItem()
        }
        phase = .between
        // An event not ended by a blank line is discarded (HTML §9.2.6: "pending data").
        if var validation = whole.take() {
            validation.feed(Self.close)
            itemVerdict.merge(validation.finish())
        }
        if skippedEvents > 0 {
            itemVerdict.notes.append(
                "\(skippedEvents) event\(skippedEvents == 1 ? "" : "s") larger than \(limit) bytes not checked")
        }
        return itemVerdict
    }

    // MARK: - Items

    /// An item's verdict with its pointers under `/index`.
    static func relocated(_ verdict: Verdict, to index: Int) -> Verdict {
        var out = Verdict()
        for violation in verdict.violations {
            out.add(
                Violation(
                    pointer: "/\(index)" + violation.pointer, keyword: violation.keyword, expected: violation.expected,
                    found: violation.found, schema: violation.schema))
        }
        // Counted, beyond those kept.
        out.total = verdict.total
        out.notes = verdict.notes
        return out
    }

    private mutating func beginItem(at offset: Int) {
        itemStart = offset
        if items > 0 { whole?.feed(Self.comma) }
        if let maximum = wholeMaxItems, items >= maximum { pastMaxItems = true }
        item = schemas.item?.validation(direction: direction)
        phase = .inItem
        noteBroken()
    }

    private mutating func itemBytes(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        whole?.feed(bytes)
        item?.feed(bytes)
        lastItemByte = bytes[bytes.count - 1]
        noteBroken()
    }

    private mutating func endItem() {
        if var validation = item.take() {
            itemVerdict.merge(Self.relocated(validation.finish(), to: items))
        }
        items += 1
        phase = .between
        noteBroken()
    }

    private mutating func oneItem(_ bytes: UnsafeRawBufferPointer) {
        beginItem(at: itemStart)
        itemBytes(bytes)
        endItem()
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }

    /// JSON Lines: an item is a line with anything but blanks in it.
    private mutating func feedLines(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        let count = bytes.count
        while index < count {
            if case .inItem = phase {
                var end = index
                while end < count, bytes[end] != 0x0A { end += 1 }
                itemBytes(UnsafeRawBufferPointer(rebasing: bytes[index..<end]))
                if end < count { endItem() }
                index = end + 1
            } else {
                let byte = bytes[index]
                if byte == 0x0A || Self.isBlank(byte) {
                    index += 1
                } else {
                    beginItem(at: index)
                }
            }
        }
    }

    /// JSON text sequences: each record starts with RS; bytes before the first RS are not a
    /// record (RFC 7464 §2.1), said as broken JSON at item 0.
    private mutating func feedRecords(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        let count = bytes.count
        while index < count {
            switch phase {
            case .inItem:
                var end = index
                while end < count, bytes[end] != 0x1E { end += 1 }
                itemBytes(UnsafeRawBufferPointer(rebasing: bytes[index..<end]))
                if end < count {
                    endItem()
                    phase = .recordStart
                }
                index = end + 1
            case .outside:
                while index < count, bytes[index] != 0x1E { index += 1 }
                if index < count { phase = .between }
            case .recordStart:
                let byte = bytes[index]
                if byte == 0x1E || byte == 0x0A || Self.isBlank(byte) {
                    // An empty record (RS RS) or the blanks before a value.
                    index += 1
                } else {
                    beginItem(at: index)
                }
            case .between:
                let byte = bytes[index]
                if byte == 0x1E {
                    phase = .recordStart
                    index += 1
                } else if byte == 0x0A || Self.isBlank(byte) {
                    index += 1
                } else {
                    // Text outside any record: an item of its own that cannot be JSON.
                    itemStart = index
                    itemVerdict.add(
                        Violation(
                            pointer: "/\(items)", keyword: "json",
                            expected: "a record separator (0x1E) before each JSON text",
                            found: "text outside a record", schema: ""))
                    items += 1
                    phase = .outside
                    noteBroken()
                }
            }
        }
    }
}

/// Reads an event stream as the HTML standard's "interpret an event stream" (§9.2.6): lines end
/// with CRLF, LF or CR; a leading BOM is dropped; `:` starts a comment; a blank line dispatches
/// the event when it has data. Each dispatched event comes out as the JSON object OAS 3.2 models
/// it as (§4.14.4): `data` with the lines joined by LF, `event`, `id`, `retry` (digits only).
struct EventReader {
    enum Output {
        case event([UInt8])
        /// An event (or one line of it) longer than the limit: not checked.
        case tooLarge
    }

    private var line: [UInt8] = []
    private var lineTooLong = false
    /// A CR ended the last line: a LF right after it belongs to it.
    private var afterCR = false
    private var started = false
    private var data: [UInt8]?
    private var type: [UInt8]?
    private var id: [UInt8]?
    private var retry: [UInt8]?
    private var size = 0
    private var eventTooLarge = false

    /// `emit` gets each event with where in `bytes` it ended (after its blank line).
    mutating func feed(_ bytes: UnsafeRawBufferPointer, limit: Int, _ emit: (Output, Int) -> Void) {
        var index = 0
        let count = bytes.count
        if !started, count > 0 {
            // The UTF-8 BOM, when the stream starts with it (it may come in pieces).
            let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
            let have = line.count
            var match = true
            var taken = 0
            while have + taken < 3, taken < count {
                if bytes[taken] != bom[have + taken] { match = false }
                taken += 1
            }
            if match, have + taken < 3 {
                line.append(contentsOf: bytes[0..<taken])
                return
            }
            started = true
            if match {
                line.removeAll()
                index = taken
            }
        }
        while index < count {
            let byte = bytes[index]
            if afterCR {
                afterCR = false
                if byte == 0x0A {
                    index += 1
                    continue
                }
            }
            if byte == 0x0A || byte == 0x0D {
                afterCR = byte == 0x0D
                let end = index + (byte == 0x0D && index + 1 < count && bytes[index + 1] == 0x0A ? 2 : 1)
                endLine(limit: limit) { emit($0, end) }
                index += 1
                continue
            }
            var end = index
            while end < count, bytes[end] != 0x0A, bytes[end] != 0x0D { end += 1 }
            if !lineTooLong {
                if line.count + (end - index) > limit {
                    lineTooLong = true
                    line.removeAll()
                } else {
                    line.append(contentsOf: bytes[index..<end])
                }
            }
            index = end
        }
    }

    private mutating func endLine(limit: Int, _ emit: (Output) -> Void) {
        defer {
            line.removeAll(keepingCapacity: true)
            lineTooLong = false
        }
        if lineTooLong {
            eventTooLarge = true
            return
        }
        if line.isEmpty { return dispatch(emit) }
        if line[0] == 0x3A { return }  // a comment
        let colon = line.firstIndex(of: 0x3A)
        let name = line[..<(colon ?? line.endIndex)]
        var value = colon.map { line[line.index(after: $0)...] } ?? []
        if value.first == 0x20 { value = value.dropFirst() }
        size += value.count
        if size > limit { eventTooLarge = true }
        if name.elementsEqual("data".utf8) {
            data = (data ?? []) + value + [0x0A]
        } else if name.elementsEqual("event".utf8) {
            type = Array(value)
        } else if name.elementsEqual("id".utf8) {
            if !value.contains(0) { id = Array(value) }
        } else if name.elementsEqual("retry".utf8) {
            if !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { retry = Array(value) }
        }
    }

    private mutating func dispatch(_ emit: (Output) -> Void) {
        defer {
            data = nil
            type = nil
            id = nil
            retry = nil
            size = 0
            eventTooLarge = false
        }
        if eventTooLarge { return emit(.tooLarge) }
        guard var data else { return }
        data.removeLast()
        func string(_ bytes: [UInt8]) -> String { Value.string(String(decoding: bytes, as: UTF8.self)).json }
        var json = "{\"data\":" + string(data)
        if let type, !type.isEmpty { json += ",\"event\":" + string(type) }
        if let id { json += ",\"id\":" + string(id) }
        if let retry {
            // Leading zeros are not JSON: the digits as the integer they are.
            let digits = retry.drop { $0 == 0x30 }
            json += ",\"retry\":" + (digits.isEmpty ? "0" : String(decoding: digits, as: UTF8.self))
        }
        json += "}"
        emit(.event(Array(json.utf8)))
    }
}
