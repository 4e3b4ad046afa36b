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
    /// Items fed to the whole sequence's validation as array elements.
    private var wholeElements = 0

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
            if schemas.framing == .records { checkRecordEnd() }
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
        // (Items the whole never saw, an event over the limit or text outside a record, are no
        // elements of its array.)
        if wholeElements > 0 { whole?.feed(Self.comma) }
        wholeElements += 1
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

    /// RFC 7464 §2.4: a record whose text ends in a number or literal with no whitespace after it
    /// (the next separator, or the end, right behind) may have been cut short.
    private mutating func checkRecordEnd() {
        guard !Self.isBlank(lastItemByte), lastItemByte != 0x0A, lastItemByte != 0x7D, lastItemByte != 0x5D,
            lastItemByte != 0x22
        else { return }
        itemVerdict.add(
            Violation(
                pointer: "/\(items)", keyword: "json", expected: "a line feed after the JSON text",
                found:
                    "a number or literal right before the next record or the end (it may be cut short: RFC 7464 §2.4)",
                schema: ""))
    }

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
                    checkRecordEnd()
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
