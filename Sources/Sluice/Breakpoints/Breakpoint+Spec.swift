import Foundation

/// A breakpoint written as data: the same keys in the configuration's `breakpoints.points` and in
/// the admin API's `PUT /breakpoints/{name}` (JSON), read by one parser; and written back out.
extension Breakpoint {
    struct SpecError: Error, Equatable {
        let message: String
    }

    static let specKeys = [
        "name", "stage", "match", "headers", "status", "media_type", "body_contains", "json", "direction",
        "message_type",
    ]

    /// Reads `{name, stage, match: {host, path, methods}, headers: {name: value | "*"}, status:
    /// [200, "5xx"], media_type, body_contains, json: {pointer, equals}}`; scalars may come as
    /// text (YAML) or typed (JSON).
    static func parse(_ spec: [String: Any], name given: String? = nil) -> Result<Breakpoint, SpecError> {
        func fail(_ message: String) -> Result<Breakpoint, SpecError> { .failure(SpecError(message: message)) }
        for key in spec.keys where !specKeys.contains(key) {
            return fail("unknown key \"\(key)\" (known: \(specKeys.joined(separator: ", ")))")
        }
        guard let name = given ?? (spec["name"] as? String), !name.isEmpty,
            name.utf8.allSatisfy({ RequestParser.isTokenByte($0) })
        else { return fail("a breakpoint needs a name: letters, digits, - _ . (a token)") }
        var point = Breakpoint(name: name)
        if let stage = spec["stage"] {
            guard let text = stage as? String, let value = Stage(rawValue: text) else {
                return fail("stage is request, response, both or messages")
            }
            point.stage = value
        }
        if let match = spec["match"] {
            guard let map = match as? [String: Any] else { return fail("match is {host, path, methods}") }
            for (key, value) in map {
                switch key {
                case "host", "path":
                    guard let text = value as? String else { return fail("match.\(key) is a glob") }
                    if key == "host", let refusal = Glob.portRefusal(text) {
                        return fail("match.host: \(refusal.message)")
                    }
                    switch Glob.parse(text, kind: key == "host" ? .host : .path) {
                    case .success(let glob):
                        if key == "host" { point.match.host = glob } else { point.match.path = glob }
                    case .failure(let error): return fail("match.\(key): bad glob \"\(text)\": \(error.message)")
                    }
                case "methods":
                    let list = (value as? [Any]) ?? [value]
                    var methods: [String] = []
                    for item in list {
                        guard let text = item as? String, MediaRange.isToken(text) else {
                            return fail("match.methods holds methods (tokens)")
                        }
                        methods.append(text.uppercased())
                    }
                    point.match.methods = methods
                default: return fail("unknown key match.\(key) (known: host, path, methods)")
                }
            }
        }
        if let headers = spec["headers"] {
            guard let map = headers as? [String: Any] else { return fail("headers is {name: value or \"*\"}") }
            for (field, value) in map.sorted(by: { $0.key < $1.key }) {
                guard field.utf8.allSatisfy({ RequestParser.isTokenByte($0) }), !field.isEmpty else {
                    return fail("headers: \"\(field)\" is not a field name")
                }
                guard let text = value as? String else { return fail("headers.\(field) is a string (\"*\": any)") }
                point.headers.append((field, text == "*" ? nil : text))
            }
        }
        if let status = spec["status"] {
            for item in (status as? [Any]) ?? [status] {
                let text = (item as? String) ?? (item as? NSNumber).map { String($0.intValue) } ?? ""
                let lower = text.lowercased()
                let isClass = lower.count == 3 && lower.hasSuffix("xx") && ("1"..."5").contains(String(lower.prefix(1)))
                guard isClass || Int(text).map({ (100...599).contains($0) }) == true else {
                    return fail("status holds codes (200) or classes (5xx): \"\(text)\"")
                }
                point.statuses.append(lower)
            }
        }
        if let media = spec["media_type"] {
            guard let text = media as? String, text.contains("/") else { return fail("media_type is type/subtype") }
            point.mediaType = text
        }
        if let contains = spec["body_contains"] {
            guard let text = contains as? String, !text.isEmpty else { return fail("body_contains is text") }
            point.bodyContains = text
        }
        if let json = spec["json"] {
            guard let map = json as? [String: Any], let pointer = map["pointer"] as? String,
                pointer.isEmpty || pointer.hasPrefix("/"), let expected = map["equals"]
            else { return fail("json is {pointer: /a/b, equals: value}") }
            for key in map.keys where key != "pointer" && key != "equals" {
                return fail("unknown key json.\(key) (known: pointer, equals)")
            }
            let text: String
            if let data = try? JSONSerialization.data(withJSONObject: expected, options: [.fragmentsAllowed]) {
                text = String(decoding: data, as: UTF8.self)
            } else {
                return fail("json.equals is a JSON value")
            }
            point.json = JSONCondition(pointer: pointer, value: text)
        }
        if let direction = spec["direction"] {
            guard let text = direction as? String, ["send", "receive", "both"].contains(text) else {
                return fail("direction is send (client to origin), receive or both")
            }
            point.direction = text == "both" ? nil : text
        }
        if let type = spec["message_type"] {
            guard let text = type as? String, ["text", "binary"].contains(text) else {
                return fail("message_type is text or binary")
            }
            point.messageType = text
        }
        if point.stage == .request || point.stage == .messages, !point.statuses.isEmpty || point.mediaType != nil {
            return fail("status and media_type are response conditions: give stage response or both")
        }
        if point.stage != .messages, point.direction != nil || point.messageType != nil {
            return fail("direction and message_type are message conditions: give stage messages")
        }
        return .success(point)
    }

    /// The breakpoint as the admin API shows it (and `PUT` takes back).
    var spec: JSONValue {
        var fields: [(String, JSONValue)] = [("name", .string(name)), ("stage", .string(stage.rawValue))]
        var match: [(String, JSONValue)] = []
        if let host = self.match.host { match.append(("host", .string(host.text))) }
        if let path = self.match.path { match.append(("path", .string(path.text))) }
        if !self.match.methods.isEmpty { match.append(("methods", .strings(self.match.methods))) }
        if !match.isEmpty { fields.append(("match", .object(match))) }
        if !headers.isEmpty { fields.append(("headers", .object(headers.map { ($0.name, .string($0.value ?? "*")) }))) }
        if !statuses.isEmpty { fields.append(("status", .strings(statuses))) }
        if let mediaType { fields.append(("media_type", .string(mediaType))) }
        if let bodyContains { fields.append(("body_contains", .string(bodyContains))) }
        if let json {
            fields.append(
                ("json", .object([("pointer", .string(json.pointer)), ("equals", Breakpoint.jsonValue(json.value))])))
        }
        if let direction { fields.append(("direction", .string(direction))) }
        if let messageType { fields.append(("message_type", .string(messageType))) }
        return .object(fields)
    }

    /// JSON text as a ``JSONValue`` (`null` when it does not parse).
    static func jsonValue(_ text: String) -> JSONValue {
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        else { return .null }
        return jsonValue(parsed)
    }

    static func jsonValue(_ value: Any) -> JSONValue {
        switch value {
        case let text as String: return .string(text)
        case let number as NSNumber:
            let text =
                (try? JSONSerialization.data(withJSONObject: number, options: [.fragmentsAllowed]))
                .map { String(decoding: $0, as: UTF8.self) } ?? "null"
            if text == "true" || text == "false" { return .bool(text == "true") }
            return Int(text).map(JSONValue.number) ?? .double(number.doubleValue)
        case let array as [Any]: return .array(array.map(jsonValue))
        case let object as [String: Any]:
            return .object(object.sorted { $0.key < $1.key }.map { ($0.key, jsonValue($0.value)) })
        default: return .null
        }
    }
}
