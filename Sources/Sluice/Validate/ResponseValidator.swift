import Contract

/// Why a response failed its rule, with the facts a problem body reports.
public struct ValidationFailure: Sendable, Equatable {
    /// One failed check.
    public enum Reason: String, Sendable, Equatable {
        case unacceptableStatus = "unacceptable-status"
        case unacceptableContentType = "unacceptable-content-type"
        case missingContentType = "missing-content-type"

        /// The problem title.
        public var title: String {
            switch self {
            case .unacceptableStatus: "Unacceptable status"
            case .unacceptableContentType: "Unacceptable content type"
            case .missingContentType: "Missing content type"
            }
        }
    }

    /// The failed checks, status first.
    public var reasons: [Reason]
    /// The rule that judged.
    public var rule: String
    /// The origin's status.
    public var status: Int
    /// The origin's `Content-Type`, as sent.
    public var contentType: String?
    /// What the rule accepts.
    public var acceptance: Acceptance

    /// AFNetworking's words: `Request failed: not found (404)`, `Request failed: unacceptable content-type: text/html`.
    public var detail: String {
        reasons.map { reason in
            switch reason {
            case .unacceptableStatus:
                "Request failed: \(ReasonPhrase.standard(status).lowercased()) (\(status))"
            case .unacceptableContentType:
                "Request failed: unacceptable content-type: \(contentType ?? "")"
            case .missingContentType:
                "Request failed: missing content-type"
            }
        }.joined(separator: "; ")
    }

    /// The `Sluice-Validation` list members for report mode.
    public var headerValue: String {
        reasons.map { "failed; reason=\"\($0.rawValue)\"; rule=\(StructuredField.quote(rule))" }.joined(separator: ", ")
    }

    func problemMembers(url: String?) -> [(String, ProblemValue)] {
        var acceptable: [(String, ProblemValue)] = [("status", .strings(acceptance.status.spelled))]
        acceptable.append(("content_types", acceptance.contentTypes.map { .strings($0.map(\.description)) } ?? .null))
        return [
            ("rule", .string(rule)), ("url", url.map(ProblemValue.string) ?? .null),
            ("upstream_status", .number(status)),
            ("content_type", contentType.map(ProblemValue.string) ?? .null), ("acceptable", .object(acceptable)),
            ("reasons", .strings(reasons.map(\.rawValue))),
        ]
    }
}

/// AFNetworking's `AFHTTPResponseSerializer` checks, made central and decided at the response headers.
public enum ResponseValidator {
    /// Request fields that make a request conditional (RFC 9110 §13.1): a 304 answers them.
    static let conditionalFields = [
        "if-none-match", "if-modified-since", "if-match", "if-unmodified-since", "if-range",
    ]

    /// The failure for a final response head, or `nil` when it is acceptable.
    /// - Parameters:
    ///   - head: the response head (redirects not followed reach here as 3xx).
    ///   - request: the request that was sent upstream.
    ///   - acceptance: what the rule accepts.
    ///   - rule: the rule's name.
    public static func validate(
        _ head: ResponseHead, request: UpstreamRequest, acceptance: Acceptance, rule: String
    ) -> ValidationFailure? {
        validate(head, method: request.method, requestHeaders: request.headers, acceptance: acceptance, rule: rule)
    }

    /// The same, for a request given by its method and header fields (a stored response served
    /// to the client's own request).
    static func validate(
        _ head: ResponseHead, method: String, requestHeaders: HTTPFields, acceptance: Acceptance, rule: String
    ) -> ValidationFailure? {
        var reasons: [ValidationFailure.Reason] = []
        if !statusPasses(head.status, requestHeaders: requestHeaders, acceptance: acceptance) {
            reasons.append(.unacceptableStatus)
        }
        let contentType = head.headers[.contentType]
        if let ranges = acceptance.contentTypes, hasBody(head, method: method) {
            if var text = contentType, !text.isEmpty {
                let accepted = text.withUTF8 { bytes in
                    guard let (type, subtype) = MediaType.bounds(bytes) else { return false }
                    return ranges.contains { $0.matches(bytes, type: type, subtype: subtype) }
                }
                if !accepted { reasons.append(.unacceptableContentType) }
            } else if !ranges.contains(where: { $0.type == "*" && $0.subtype == "*" }) {
                reasons.append(.missingContentType)
            }
        }
        guard !reasons.isEmpty else { return nil }
        return ValidationFailure(
            reasons: reasons, rule: rule, status: head.status, contentType: contentType, acceptance: acceptance)
    }

    /// Status check: the set decides, except that redirects passed back and a 304 answering the
    /// client's own conditional request are never failures.
    static func statusPasses(_ status: Int, requestHeaders: HTTPFields, acceptance: Acceptance) -> Bool {
        if acceptance.status.contains(status) { return true }
        if status == 304 { return conditionalFields.contains { requestHeaders.contains($0) } }
        return (300...399).contains(status)
    }

    /// Whether the response carries content (HEAD, 1xx, 204, 205, 304 and `Content-Length: 0` do not).
    static func hasBody(_ head: ResponseHead, method: String) -> Bool {
        if method == "HEAD" || head.status < 200 || head.status == 204 || head.status == 205 || head.status == 304 {
            return false
        }
        if let length = head.headers[.contentLength], length == "0", !head.headers.contains(.transferEncoding) {
            return false
        }
        return true
    }
}

/// The did-receive-response hook of a rule in `enforce` mode: a rejected response's transfer is
/// cancelled at the headers (its body is never read) and the exchange answers 502.
struct ValidationGate: ResponseHandler {
    let acceptance: Acceptance
    let rule: String

    func task(_ task: UpstreamTask, didReceive response: ResponseHead) -> ResponseDisposition {
        guard
            let failure = ResponseValidator.validate(
                response, request: task.currentRequest, acceptance: acceptance, rule: rule)
        else { return .allow }
        return .cancel(.validationFailed(failure))
    }
}

/// The did-receive-response hook of an enforced OpenAPI contract: a head that breaks it (a
/// required header missing, an undocumented status under `undocumented: enforce`) is cancelled at
/// the headers, like a rejected `accept:`; the body's verdict comes later, at delivery. Only the
/// head checks run here (no body validator is made).
struct ContractGate: ResponseHandler {
    let rule: Rule

    func task(_ task: UpstreamTask, didReceive response: ResponseHead) -> ResponseDisposition {
        let request = task.currentRequest
        guard let settings = rule.contract,
            let check = ContractRun.responseHead(
                response, method: request.method, url: request.url, settings: settings),
            ContractRun.headFailsEnforced(check, settings, .response)
        else { return .allow }
        return .cancel(
            .contractViolation(
                ContractRun.headFailure(check, settings, rule: rule.name, direction: .response, method: request.method))
        )
    }
}

/// Gates in order; the first that cancels decides.
struct GateChain: ResponseHandler {
    let gates: [any ResponseHandler]

    func task(_ task: UpstreamTask, didReceive response: ResponseHead) -> ResponseDisposition {
        for gate in gates {
            if case .cancel(let error) = gate.task(task, didReceive: response) { return .cancel(error) }
        }
        return .allow
    }
}

/// RFC 8941 helpers for the `Sluice-Validation` field.
enum StructuredField {
    /// An sf-string: printable ASCII, with `"` and `\` escaped; other bytes become `?`.
    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"", "\\":
                out += "\\"
                out.unicodeScalars.append(scalar)
            case " "..."~": out.unicodeScalars.append(scalar)
            default: out += "?"
            }
        }
        return out + "\""
    }
}
