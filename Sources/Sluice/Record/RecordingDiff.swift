import Codec
import Contract

/// What two recordings of the same flow did differently (`sluice record diff A B`): requests
/// paired by method and URL (query order ignored) in the order they occur, then requests only
/// one of them made, and for each pair a changed status, media type or body, JSON bodies compared
/// value by value and named by JSON Pointer (RFC 6901).
public struct RecordingDiff: Sendable {
    public enum Change: Sendable, Equatable {
        /// Made only in the second recording.
        case added(request: String, status: Int)
        /// Made only in the first.
        case removed(request: String, status: Int)
        /// Made in both, answered differently.
        case changed(request: String, differences: [String])
    }

    public private(set) var changes: [Change] = []
    /// Pairs compared in all.
    public private(set) var compared = 0

    public var isEmpty: Bool { changes.isEmpty }

    /// The most differences listed per exchange.
    static let limit = 50

    /// - Parameter ignoring: JSON Pointers whose values (and what is below them) are not compared.
    public init(_ first: [RecordedExchange], _ second: [RecordedExchange], ignoring: [String] = []) {
        func key(_ exchange: RecordedExchange) -> String { exchange.method + " " + RequestURL(exchange.url).normalized }
        var waiting: [String: [Int]] = [:]
        for (index, exchange) in second.enumerated() { waiting[key(exchange), default: []].append(index) }
        for exchange in first {
            let name = exchange.method + " " + exchange.url
            guard var candidates = waiting[key(exchange)], !candidates.isEmpty else {
                changes.append(.removed(request: name, status: exchange.status))
                continue
            }
            let other = second[candidates.removeFirst()]
            waiting[key(exchange)] = candidates
            compared += 1
            let differences = RecordingDiff.compare(exchange, other, ignoring: Set(ignoring))
            if !differences.isEmpty { changes.append(.changed(request: name, differences: differences)) }
        }
        for candidates in waiting.values {
            for index in candidates {
                changes.append(
                    .added(request: second[index].method + " " + second[index].url, status: second[index].status))
            }
        }
    }

    static func compare(_ a: RecordedExchange, _ b: RecordedExchange, ignoring: Set<String>) -> [String] {
        var out: [String] = []
        if a.status != b.status { out.append("status: \(a.status) → \(b.status)") }
        let typeA = field(a, "content-type") ?? ""
        let typeB = field(b, "content-type") ?? ""
        if typeA != typeB {
            out.append("content-type: \(typeA.isEmpty ? "none" : typeA) → \(typeB.isEmpty ? "none" : typeB)")
        }
        let bodyA = decoded(a)
        let bodyB = decoded(b)
        guard bodyA != bodyB else { return out }
        if !a.responseComplete || !b.responseComplete {
            out.append(
                "body: recorded cut in \(a.responseComplete ? "the second" : "the first") recording; not compared")
        } else if let valueA = try? Value.parse(bodyA), let valueB = try? Value.parse(bodyB) {
            var pointers: [String] = []
            json(valueA, valueB, at: "", ignoring: ignoring, into: &pointers)
            if pointers.count > limit {
                let more = pointers.count - limit
                pointers = Array(pointers.prefix(limit)) + ["… \(more) more"]
            }
            out += pointers
        } else {
            out.append("body: \(a.responseBodySize) bytes → \(b.responseBodySize) bytes, different content")
        }
        return out
    }

    private static func field(_ exchange: RecordedExchange, _ name: String) -> String? {
        exchange.responseHeaders.first { $0.hasName(name) }?.value
    }

    /// The body decoded of its content coding, when it has one Sluice reads.
    private static func decoded(_ exchange: RecordedExchange) -> [UInt8] {
        guard let coding = field(exchange, "content-encoding").flatMap(ContentCoding.init(token:)),
            let body = try? coding.decode(exchange.responseBody, limit: 256 << 20)
        else { return exchange.responseBody }
        return body
    }

    /// The differences between two JSON values, by pointer.
    static func json(_ a: Value, _ b: Value, at pointer: String, ignoring: Set<String>, into out: inout [String]) {
        if ignoring.contains(pointer) || out.count > limit { return }
        let shown = pointer.isEmpty ? "/" : pointer
        switch (a, b) {
        case (.object(let membersA), .object(let membersB)):
            for (key, valueA) in membersA {
                let child = pointer + "/" + Value.escape(key)
                if let valueB = b[key] {
                    json(valueA, valueB, at: child, ignoring: ignoring, into: &out)
                } else if !ignoring.contains(child) {
                    out.append("\(child): removed (was \(excerpt(valueA)))")
                }
            }
            for (key, valueB) in membersB where a[key] == nil {
                let child = pointer + "/" + Value.escape(key)
                if !ignoring.contains(child) { out.append("\(child): added \(excerpt(valueB))") }
            }
        case (.array(let itemsA), .array(let itemsB)):
            for index in 0..<max(itemsA.count, itemsB.count) {
                let child = pointer + "/" + String(index)
                if ignoring.contains(child) { continue }
                if index >= itemsB.count {
                    out.append("\(child): removed (was \(excerpt(itemsA[index])))")
                } else if index >= itemsA.count {
                    out.append("\(child): added \(excerpt(itemsB[index]))")
                } else {
                    json(itemsA[index], itemsB[index], at: child, ignoring: ignoring, into: &out)
                }
            }
        case (.number(let x), .number(let y)):
            if Number.compare(x, y) != 0 { out.append("\(shown): \(a.json) → \(b.json)") }
        default:
            if a.json != b.json { out.append("\(shown): \(excerpt(a)) → \(excerpt(b))") }
        }
    }

    /// A value's JSON, cut at 80 characters.
    private static func excerpt(_ value: Value) -> String {
        let text = value.json
        return text.count > 80 ? String(text.prefix(77)) + "…" : text
    }

    /// One line per change, as `diff -u` readers expect: `-` removed, `+` added, `~` changed.
    public var text: String {
        var lines: [String] = []
        for change in changes {
            switch change {
            case .removed(let request, let status): lines.append("- \(request) (\(status))")
            case .added(let request, let status): lines.append("+ \(request) (\(status))")
            case .changed(let request, let differences):
                lines.append("~ \(request)")
                lines += differences.map { "    " + $0 }
            }
        }
        return lines.joined(separator: "\n")
    }
}
