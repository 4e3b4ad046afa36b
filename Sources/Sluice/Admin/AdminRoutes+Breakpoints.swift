import Foundation

/// `GET /breakpoints`, `PUT`/`DELETE /breakpoints/{name}`; `GET /paused`,
/// `POST /paused/{id}/resume | abort | answer` with the edits as JSON. These change traffic: they
/// keep the admin API's guards (loopback, `Host` and `Origin` checks, `admin.token`).
extension AdminRoutes {
    func breakpoints(method: String, parts: [String], body: [UInt8]) -> Answer {
        let book = proxy.environment.breakpoints
        if parts.isEmpty {
            guard method == "GET" || method == "HEAD" else {
                return .error(405, "\(method) is not allowed on /breakpoints")
            }
            return .json(
                200,
                .object([
                    ("timeout_ms", .number(book.timeoutMilliseconds)), ("breakpoints", .array(book.points.map(\.spec))),
                ]))
        }
        guard parts.count == 1 else {
            return .error(404, "try /breakpoints, PUT or DELETE /breakpoints/{name}")
        }
        let name = AdminConnection.percentDecoded(parts[0])
        switch method {
        case "PUT":
            let spec: [String: Any]
            if body.isEmpty {
                spec = [:]
            } else {
                guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
                    return .error(400, "the breakpoint must be a JSON object")
                }
                spec = object
            }
            if let given = spec["name"] as? String, given != name {
                return .error(400, "the body names \(given), the path \(name)")
            }
            switch Breakpoint.parse(spec.filter { $0.key != "name" }, name: name) {
            case .failure(let error): return .error(400, error.message)
            case .success(let point):
                book.put(point)
                return .json(200, point.spec)
            }
        case "DELETE":
            guard book.remove(name) else { return .error(404, "no breakpoint named \(name)") }
            return .json(200, .object([("removed", .string(name))]))
        case "GET", "HEAD":
            guard let point = book.points.first(where: { $0.name == name }) else {
                return .error(404, "no breakpoint named \(name)")
            }
            return .json(200, point.spec)
        default:
            return .error(405, "\(method) is not allowed on /breakpoints/\(name)")
        }
    }

    func paused(method: String, parts: [String], body: [UInt8]) -> Answer {
        let book = proxy.environment.breakpoints
        if parts.isEmpty {
            guard method == "GET" || method == "HEAD" else {
                return .error(405, "\(method) is not allowed on /paused")
            }
            // The list shows each body's first KiB (and its size): the page reads it every
            // second, and paused bodies may be megabytes each (`GET /paused/{id}` has it whole).
            return .json(
                200,
                .array(
                    book.paused.filter { $0.target != nil }.map { AdminRoutes.json($0, bodyLimit: Self.listedBody) }))
        }
        guard let id = Int(parts[0]) else { return .error(404, "no paused item \(parts[0])") }
        if parts.count == 1, method == "GET" || method == "HEAD" {
            guard let item = book.item(id), item.target != nil else {
                return .error(404, "no paused item \(id) (decided, timed out or its client left)")
            }
            return .json(200, AdminRoutes.json(item))
        }
        if parts.count == 2, parts[1] == "check" {
            guard method == "POST" else { return .error(405, "POST /paused/\(id)/check") }
            guard let item = book.item(id) else { return .error(404, "no paused item \(id)") }
            return checkEdit(item, body: body)
        }
        guard parts.count == 2, ["resume", "abort", "answer"].contains(parts[1]) else {
            return .error(404, "try GET /paused, POST /paused/{id}/resume | abort | answer")
        }
        guard method == "POST" else {
            return .error(405, "POST /paused/\(id)/\(parts[1])")
        }
        guard let item = book.item(id), item.target != nil else {
            return .error(404, "no paused item \(id) (decided, timed out or its client left)")
        }
        let object: [String: Any]
        if body.isEmpty {
            object = [:]
        } else {
            guard let read = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
                return .error(400, "the decision must be a JSON object")
            }
            object = read
        }
        let decision: PauseDecision
        switch parts[1] {
        case "abort":
            if let unknown = object.keys.first(where: { $0 != "close" }) {
                return .error(400, "unknown key \(unknown) (known: close)")
            }
            guard object["close"] == nil || object["close"] is Bool else {
                return .error(400, "close is true or false")
            }
            decision = .abort(closing: (object["close"] as? Bool) ?? false)
        default:
            switch AdminRoutes.readMessage(object, stage: item.stage, answering: parts[1] == "answer") {
            case .failure(let error): return .error(400, error.why)
            case .success(let message):
                if let why = AdminRoutes.unsendable(
                    message, of: item, answering: parts[1] == "answer",
                    fieldsLimit: proxy.environment.parserLimits.maxHeaderBytes)
                {
                    return .error(400, why)
                }
                if parts[1] == "answer" {
                    decision = .answer(message ?? PausedMessage(status: 200))
                } else {
                    decision = .resume(message)
                }
            }
        }
        guard book.decide(id, decision) else {
            return .error(404, "paused item \(id) is gone (its client left)")
        }
        return .json(200, .object([("id", .number(id)), ("decided", .string(parts[1]))]))
    }

    /// The contract's verdict on a paused item as edited (the page checks as the person types):
    /// `{outcome: passed | failed | not-validated | none, failure?}`. Nothing is decided.
    func checkEdit(_ item: PausedItem, body: [UInt8]) -> Answer {
        let object = body.isEmpty ? [:] : (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        guard let object else { return .error(400, "the edit must be a JSON object") }
        let edit: PausedMessage?
        switch AdminRoutes.readMessage(object, stage: item.stage, answering: false) {
        case .failure(let error): return .error(400, error.why)
        case .success(let read): edit = read
        }
        let book = proxy.ruleBook
        guard let name = item.contractRule, let rule = (book.rules + [book.defaults]).first(where: { $0.name == name }),
            let url = item.request.url.flatMap(TargetURL.init)
        else { return .json(200, .object([("outcome", .string("none"))])) }
        let limit = proxy.environment.transformLimit
        let run: ContractRun?
        let content: [UInt8]
        switch item.stage {
        case .message:
            return .json(200, .object([("outcome", .string("none"))]))
        case .response:
            let original = item.response ?? PausedMessage()
            let fields = edit?.headers ?? original.headers ?? []
            let head = ResponseHead(status: edit?.status ?? original.status ?? 200, headers: HTTPFields(fields))
            content = edit?.body ?? original.body ?? []
            run = ContractRun.response(head, method: item.request.method ?? "GET", url: url, rule: rule, limit: limit)
        case .request:
            let method = edit?.method ?? item.request.method ?? "GET"
            let target = (edit?.url).flatMap(TargetURL.init) ?? url
            content = edit?.body ?? item.request.body ?? []
            let request = UpstreamRequest(
                method: method, url: target, headers: HTTPFields(edit?.headers ?? item.request.headers ?? []),
                body: content.isEmpty ? .none : .length(Int64(content.count)))
            run = ContractRun.request(request, rule: rule, limit: limit)
        }
        guard let run else { return .json(200, .object([("outcome", .string("none"))])) }
        content.withUnsafeBytes { run.feed($0) }
        switch run.finish() {
        case .passed: return .json(200, .object([("outcome", .string("passed"))]))
        case .notValidated(let why):
            return .json(200, .object([("outcome", .string("not-validated")), ("detail", .string(why))]))
        case .failed(let failure):
            return .json(200, .object([("outcome", .string("failed")), ("failure", failure.jsonValue)]))
        }
    }

    /// `{method, url, status, headers: [[name, value]…] or {name: value}, body | body_base64}`:
    /// `nil` when nothing is edited.
    static func readMessage(_ object: [String: Any], stage: PausedItem.Stage, answering: Bool)
        -> Result<PausedMessage?, DraftError>
    {
        let known: Set<String> =
            stage == .message
            ? ["type", "body", "body_base64"]
            : answering || stage == .response
                ? ["status", "headers", "body", "body_base64"] : ["method", "url", "headers", "body", "body_base64"]
        if let unknown = object.keys.first(where: { !known.contains($0) }) {
            return .failure(
                DraftError(why: "unknown key \(unknown) (known: \(known.sorted().joined(separator: ", ")))"))
        }
        guard !object.isEmpty else { return .success(nil) }
        var message = PausedMessage()
        // Checked here, before anything is decided: a bad edit is a 400 and the item stays paused.
        if let method = object["method"] {
            guard let text = method as? String, !text.isEmpty, text.utf8.allSatisfy({ RequestParser.isTokenByte($0) })
            else { return .failure(DraftError(why: "method is a token (GET, POST, …)")) }
            message.method = text
        }
        if let url = object["url"] {
            guard let text = url as? String, let target = TargetURL(text),
                target.scheme == "http" || target.scheme == "https"
            else { return .failure(DraftError(why: "url is an absolute http:// or https:// URL")) }
            message.url = text
        }
        if let type = object["type"] {
            guard let text = type as? String, text == "text" || text == "binary" else {
                return .failure(DraftError(why: "type is text or binary"))
            }
            message.opcode = text == "text" ? .text : .binary
        }
        if let status = object["status"] {
            guard let number = status as? NSNumber, number.doubleValue == Double(number.intValue),
                (200...599).contains(number.intValue)
            else { return .failure(DraftError(why: "status is a final status code (200…599)")) }
            let code = number.intValue
            message.status = code
        }
        if let headers = object["headers"] {
            if let pairs = headers as? [[String]], pairs.allSatisfy({ $0.count == 2 }) {
                message.headers = pairs.map { ($0[0], $0[1]) }
            } else if let map = headers as? [String: String] {
                message.headers = map.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            } else {
                return .failure(DraftError(why: "headers are [[name, value]…] or {name: value}"))
            }
            if let (name, _) = (message.headers ?? []).first(where: {
                !PausedMessage.isValidField(name: $0.0, value: $0.1)
            }) {
                return .failure(DraftError(why: "\"\(name)\" is not a field name, or its value holds CR, LF or NUL"))
            }
        }
        if object["body"] != nil, object["body_base64"] != nil {
            return .failure(DraftError(why: "body or body_base64, not both"))
        }
        if let text = object["body"] as? String {
            message.body = Array(text.utf8)
        } else if let encoded = object["body_base64"] as? String {
            guard let data = Data(base64Encoded: encoded) else {
                return .failure(DraftError(why: "body_base64 is not base64"))
            }
            message.body = Array(data)
        } else if object["body"] != nil {
            return .failure(DraftError(why: "body is text (or body_base64)"))
        }
        return .success(message)
    }

    /// Why an edit cannot go on the wire as it is, or `nil`: a text message that is not UTF-8
    /// (RFC 6455 §8.1: its receiver fails the connection), fields larger than the proxy takes
    /// from a client (`fieldsLimit`).
    static func unsendable(_ message: PausedMessage?, of item: PausedItem, answering: Bool, fieldsLimit: Int)
        -> String?
    {
        guard let message else { return nil }
        // (A type changed with the body kept: the body kept is checked.)
        if item.stage == .message, let body = message.body ?? (answering ? nil : item.message?.body) {
            let opcode = message.opcode ?? (answering ? .text : item.message?.opcode ?? .text)
            if opcode == .text, String(validating: body, as: UTF8.self) == nil {
                return "a text message must be UTF-8 (RFC 6455 §8.1): give \"type\": \"binary\" to send bytes"
            }
        }
        let line = (message.method?.utf8.count ?? 0) + (message.url?.utf8.count ?? 0) + 12
        let size = (message.headers ?? []).reduce(line) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 }
        if size > fieldsLimit {
            return "the fields take \(size) bytes; a head may take \(fieldsLimit) (limits.max_header_bytes)"
        }
        return nil
    }

    /// Body bytes each item of `GET /paused` shows.
    static let listedBody = 1024

    /// A paused item as the API shows it; its bodies cut to `bodyLimit` bytes (with their
    /// `body_size`) when longer.
    static func json(_ item: PausedItem, bodyLimit: Int = .max) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("id", .number(item.id)), ("exchange", .number(item.exchange)), ("stage", .string(item.stage.rawValue)),
            ("breakpoint", .string(item.breakpoint)), ("since", .double(item.since)),
            ("deadline", .double(item.deadline)), ("contract_rule", .optional(item.contractRule)),
            ("request", item.request.json(bodyLimit: bodyLimit)),
        ]
        if let response = item.response { fields.append(("response", response.json(bodyLimit: bodyLimit))) }
        if let message = item.message {
            var shown = message.json(bodyLimit: bodyLimit)
            if case .object(var members) = shown {
                members.removeAll { $0.0 == "headers" }
                members.insert(("direction", .optional(item.direction?.rawValue)), at: 0)
                members.insert(("type", .string(message.opcode == .binary ? "binary" : "text")), at: 1)
                shown = .object(members)
            }
            fields.append(("message", shown))
        }
        return .object(fields)
    }

    static func json(_ message: PausedMessage) -> JSONValue { message.json() }
}
