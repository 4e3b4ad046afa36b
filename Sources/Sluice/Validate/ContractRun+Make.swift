import Codec
import Contract

extension ContractRun {
    /// The head checks of a response under a contract; `nil` when there is nothing to check (a
    /// schema contract and a response that is not a 2xx JSON body).
    static func responseHead(_ head: ResponseHead, method: String, url: TargetURL, settings: ContractRule) -> HeadCheck?
    {
        switch settings.loaded?.kind {
        case nil: return nil
        case .openAPI(let document):
            return document.checkResponse(
                method: method, path: url.pathAndQuery, status: head.status,
                headers: head.headers.map { ($0.name, $0.value) })
        case .schema(let schema):
            guard (200...299).contains(head.status), head.status != 204, method != "HEAD",
                let type = head.headers[.contentType], Contract.MediaRange.isJSON(type)
            else { return nil }
            var check = HeadCheck()
            check.template = url.path
            check.bodySchema = schema
            return check
        }
    }

    /// The check of a request under a rule's contract (`requests: report | enforce`, OpenAPI only).
    static func request(_ request: UpstreamRequest, rule: Rule, limit: Int) -> ContractRun? {
        guard let settings = rule.contract, settings.requests != .off, let loaded = settings.loaded,
            case .openAPI(let document) = loaded.kind
        else { return nil }
        let target = request.url.pathAndQuery
        let query = target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) }
        let hasBody: Bool =
            switch request.body {
            case .none: false
            default: true
            }
        var check = document.checkRequest(
            method: request.method, path: target, query: query, headers: request.headers.map { ($0.name, $0.value) },
            hasBody: hasBody)
        // An undocumented operation is the response's check to report: said once an exchange.
        // Enforced, it stops the request here, before the origin sees it.
        if settings.undocumented == .report { check.undocumented.removeAll { $0.keyword == "undocumented-operation" } }
        let coding = request.headers[.contentEncoding].flatMap { ContentCoding(token: $0) }
        return ContractRun(
            rule: rule.name, settings: settings, direction: .request, method: request.method, check: check,
            coding: coding, limit: limit)
    }

    /// The check of a response head under a rule's contract, or `nil` when there is nothing to check.
    static func response(
        _ head: ResponseHead, method: String, url: TargetURL, rule: Rule, limit: Int
    ) -> ContractRun? {
        guard let settings = rule.contract, let check = responseHead(head, method: method, url: url, settings: settings)
        else { return nil }
        let codings =
            head.headers.contains(.contentEncoding)
            ? head.headers.tokens(.contentEncoding).filter { $0 != "identity" } : []
        var coding: ContentCoding?
        var unknownCoding: String?
        if let first = codings.first {
            if codings.count == 1, let known = ContentCoding(token: first) {
                coding = known
            } else {
                unknownCoding = codings.joined(separator: ", ")
            }
        }
        let run = ContractRun(
            rule: rule.name, settings: settings, direction: .response, method: method, check: check,
            status: head.status, coding: coding, limit: limit)
        if let unknownCoding, run.validatesBody { run.skipBody("Content-Encoding \(unknownCoding) is not decoded") }
        if head.status == 206, run.validatesBody { run.skipBody("a partial response (206) cannot be validated") }
        return run
    }
}

extension Rule {
    /// The verdict of this rule's contract on a response that already happened (stored in the
    /// cache, or recorded), by the same checks as one that passes through: the head, then the
    /// whole body.
    /// - Parameters:
    ///   - body: the body as the origin sent it (decoded here when its `Content-Encoding` says so).
    ///   - limit: the most a compressed body may decode to (`limits.max_transform_body`).
    /// - Returns: `nil` when the contract has nothing to say of it.
    public func contractVerdict(
        of head: ResponseHead, method: String, url: TargetURL, body: [UInt8], limit: Int
    ) -> (check: ContractCheck, failure: ContractFailure?)? {
        guard let run = ContractRun.response(head, method: method, url: url, rule: self, limit: limit) else {
            return nil
        }
        body.withUnsafeBytes { run.feed($0) }
        guard case .failed(let failure) = run.finish() else { return (run.record, nil) }
        return (run.record, failure)
    }
}
