import Foundation

/// `POST /compose`: a request written in the page's composer (or by a script) goes through
/// Sluice's own path as a new exchange, `repeat` times in a row (resend ×N); the answers come
/// back as JSON, and each exchange shows on the page like any other, its client `composed`.
extension AdminRoutes {
    /// The most times one draft is sent.
    static let composeRepeatLimit = 100

    func compose(_ body: [UInt8]) -> Answer {
        let draft: ComposedRequest.Draft
        let count: Int
        switch AdminRoutes.readDraft(body) {
        case .success(let read): (draft, count) = read
        case .failure(let error): return .error(400, error.why)
        }
        let env = proxy.environment
        return .awaiting { deliver in
            // The caller may leave (a paused repeat it gave up on): the exchange in flight goes as
            // a client's would, and no other repeat starts.
            final class Run {
                enum Phase {
                    case sending(ComposedRequest)
                    case between
                    case callerLeft
                }
                var phase = Phase.between
                var answers: [JSONValue] = []
            }
            let run = Run()
            func failed(_ error: SluiceError) {
                let problem = Problem(error, url: draft.url)
                deliver(.error(problem.status, problem.detail))
            }
            func next() {
                let made = ComposedRequest.make(draft, env: env) { result in
                    if case .callerLeft = run.phase { return }
                    run.phase = .between
                    switch result {
                    case .success(let answer):
                        run.answers.append(AdminRoutes.json(answer))
                        if run.answers.count < count { return next() }
                        deliver(.json(200, .object([("results", .array(run.answers))])))
                    case .failure(let error): failed(error)
                    }
                }
                switch made {
                case .failure(let error): failed(error)
                case .success(let request):
                    // Known before it starts: it may finish at once (answered locally).
                    run.phase = .sending(request)
                    request.start()
                }
            }
            next()
            return {
                let was = run.phase
                run.phase = .callerLeft  // before the cancel, whose answer is then not delivered
                if case .sending(let request) = was { request.cancel() }
            }
        }
    }

    /// `{method, url, headers: [[name, value]…] or {name: value}, body | body_base64, repeat}`.
    struct DraftError: Error {
        let why: String
    }

    static func readDraft(_ body: [UInt8]) -> Result<(ComposedRequest.Draft, Int), DraftError> {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            return .failure(
                DraftError(
                    why: "the draft must be a JSON object: {\"method\", \"url\", \"headers\", \"body\", \"repeat\"}"))
        }
        let known: Set<String> = ["method", "url", "headers", "body", "body_base64", "repeat"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            return .failure(
                DraftError(why: "unknown key \(unknown) (known: \(known.sorted().joined(separator: ", ")))"))
        }
        guard let url = object["url"] as? String else { return .failure(DraftError(why: "the draft needs a url")) }
        // A value of another type is said, never taken as absent (`"body": {…}` sent nothing).
        for (key, wanted) in [("method", "text"), ("body", "text"), ("body_base64", "Base64 text")]
        where object[key] != nil && !(object[key] is String) {
            return .failure(
                DraftError(why: "\(key) is \(wanted)\(key == "body" ? " (a JSON document goes as its text)" : "")"))
        }
        if let count = object["repeat"], !(count is Int) {
            return .failure(DraftError(why: "repeat is a whole number, 1 to \(composeRepeatLimit)"))
        }
        let method = (object["method"] as? String) ?? "GET"
        var headers: [(String, String)] = []
        if let pairs = object["headers"] as? [[String]] {
            for pair in pairs {
                guard pair.count == 2 else { return .failure(DraftError(why: "each header is [name, value]")) }
                headers.append((pair[0], pair[1]))
            }
        } else if let map = object["headers"] as? [String: String] {
            headers = map.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        } else if object["headers"] != nil {
            return .failure(DraftError(why: "headers are [[name, value]…] or {name: value}"))
        }
        var bytes: [UInt8] = []
        if let text = object["body"] as? String {
            bytes = Array(text.utf8)
        } else if let encoded = object["body_base64"] as? String {
            guard let data = Data(base64Encoded: encoded) else {
                return .failure(DraftError(why: "body_base64 is not Base64"))
            }
            bytes = Array(data)
        }
        let count = (object["repeat"] as? Int) ?? 1
        guard (1...composeRepeatLimit).contains(count) else {
            return .failure(DraftError(why: "repeat is 1 to \(composeRepeatLimit)"))
        }
        return .success((ComposedRequest.Draft(method: method, url: url, headers: headers, body: bytes), count))
    }

    static func json(_ answer: ComposedRequest.Answer) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .number(answer.id)), ("status", .number(answer.status)),
            ("headers", .array(answer.headers.map { .strings([$0.0, $0.1]) })),
            ("body_size", .number(Int(answer.bodySize))),
            ("duration_ms", .double((answer.durationMilliseconds * 1000).rounded() / 1000)),
        ]
        if let text = String(validating: answer.body, as: UTF8.self) {
            members.append(("body", .string(text)))
        } else {
            members.append(("body_base64", .string(Data(answer.body).base64EncodedString())))
        }
        members.append(("body_truncated", .bool(Int64(answer.body.count) < answer.bodySize)))
        return .object(members)
    }
}
