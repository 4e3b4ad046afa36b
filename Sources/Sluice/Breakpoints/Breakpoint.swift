import Foundation

/// A breakpoint (`breakpoints:` in the configuration, or added live from the page, the admin API
/// and `sluice breakpoint add`): which exchanges it pauses, and where. Matching is a pure
/// function of the request (and, at the response stage, the response) and its body.
public struct Breakpoint: Sendable, Equatable {
    /// Where an exchange pauses.
    public enum Stage: String, Sendable, CaseIterable {
        /// Before the request is sent upstream (its body read whole, bounded).
        case request
        /// Before the response reaches the client (held whole, bounded).
        case response
        /// Both.
        case both
        /// The messages of an upgraded connection (WebSocket), either direction.
        case messages

        var pausesRequests: Bool { self == .request || self == .both }
        var pausesResponses: Bool { self == .response || self == .both }
    }

    /// A JSON body whose value at `pointer` (RFC 6901) equals `value`.
    public struct JSONCondition: Sendable, Equatable {
        public var pointer: String
        /// The expected value as JSON text (compared as parsed JSON).
        public var value: String
    }

    public var name: String
    public var stage: Stage = .request
    /// Host, path and methods, as in a rule's `match:`.
    public var match = RuleMatch()
    /// Request header fields that must be present: a value of `nil` accepts any value; otherwise
    /// the field's value must contain it (case-insensitive).
    public var headers: [(name: String, value: String?)] = []
    /// Response statuses (`200`, or a class `5xx`), at the response stage; empty = any.
    public var statuses: [String] = []
    /// The response's media type (`application/json`; `application/*`), at the response stage.
    public var mediaType: String?
    /// The body contains this text (the request's at the request stage, the response's at the
    /// response stage).
    public var bodyContains: String?
    public var json: JSONCondition?
    /// At the messages stage: `send` (client to origin), `receive`, or either (`nil`).
    public var direction: String?
    /// At the messages stage: `text` or `binary`, or either (`nil`).
    public var messageType: String?

    public init(name: String) { self.name = name }

    public static func == (a: Breakpoint, b: Breakpoint) -> Bool {
        a.name == b.name && a.stage == b.stage && a.match == b.match
            && a.headers.elementsEqual(b.headers) { $0.name == $1.name && $0.value == $1.value }
            && a.statuses == b.statuses && a.mediaType == b.mediaType && a.bodyContains == b.bodyContains
            && a.json == b.json && a.direction == b.direction && a.messageType == b.messageType
    }

    /// Whether a WebSocket message of this direction and type may pause here.
    func fitsMessage(direction: WebSocketFrames.Direction, opcode: WebSocketFrames.Opcode) -> Bool {
        guard stage == .messages else { return false }
        if let wanted = self.direction, wanted != direction.rawValue { return false }
        if let type = messageType, type != (opcode == .text ? "text" : "binary") { return false }
        return true
    }

    /// Whether it has conditions only a response can meet (status, media type).
    var hasResponseConditions: Bool { !statuses.isEmpty || mediaType != nil }

    /// Whether the conditions need the body (it is then read whole before deciding).
    var readsBody: Bool { bodyContains != nil || json != nil }

    // MARK: - Matching

    /// Whether a request fits the request-side conditions (method, host, path, fields).
    func matchesRequest(method: String, host: String, path: String, fields: HTTPFields) -> Bool {
        guard match.matches(method: method, host: host, path: path) else { return false }
        for wanted in headers {
            guard let value = fields[wanted.name] else { return false }
            if let part = wanted.value, value.range(of: part, options: .caseInsensitive) == nil { return false }
        }
        return true
    }

    /// Whether a response head fits the response-side conditions (status, media type).
    func matchesResponse(_ head: ResponseHead) -> Bool {
        if !statuses.isEmpty, !statuses.contains(where: { Breakpoint.status(head.status, fits: $0) }) { return false }
        if let mediaType {
            guard let type = head.headers[.contentType].flatMap(MediaType.init) else { return false }
            let wanted = mediaType.lowercased()
            let actual = type.essence.lowercased()
            if wanted.hasSuffix("/*") {
                guard actual.hasPrefix(String(wanted.dropLast(1))) else { return false }
            } else if actual != wanted {
                return false
            }
        }
        return true
    }

    /// Whether a body fits the body conditions (text, JSON pointer).
    func matchesBody(_ body: [UInt8]) -> Bool {
        if let bodyContains {
            let needle = Array(bodyContains.utf8)
            guard !needle.isEmpty, body.count >= needle.count else { return needle.isEmpty }
            var found = false
            for start in 0...(body.count - needle.count) where body[start] == needle[0] {
                if body[start..<(start + needle.count)].elementsEqual(needle) {
                    found = true
                    break
                }
            }
            guard found else { return false }
        }
        if let json {
            guard let document = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]),
                let expected = try? JSONSerialization.jsonObject(
                    with: Data(json.value.utf8), options: [.fragmentsAllowed]),
                let actual = Breakpoint.resolve(json.pointer, in: document)
            else { return false }
            return Breakpoint.jsonValue(actual) == Breakpoint.jsonValue(expected)
        }
        return true
    }

    /// `200` or a class (`2xx`).
    static func status(_ status: Int, fits pattern: String) -> Bool {
        let lower = pattern.lowercased()
        if lower.count == 3, lower.hasSuffix("xx"), let digit = lower.first?.wholeNumberValue {
            return status / 100 == digit
        }
        return Int(pattern) == status
    }

    /// The value at an RFC 6901 pointer in a parsed JSON document.
    static func resolve(_ pointer: String, in document: Any) -> Any? {
        guard !pointer.isEmpty else { return document }
        guard pointer.hasPrefix("/") else { return nil }
        var current = document
        for raw in pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let token = raw.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            if let object = current as? [String: Any] {
                guard let next = object[token] else { return nil }
                current = next
            } else if let array = current as? [Any] {
                guard let index = Int(token), index >= 0, index < array.count, String(index) == token else {
                    return nil
                }
                current = array[index]
            } else {
                return nil
            }
        }
        return current
    }
}
