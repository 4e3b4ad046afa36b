import Codec

/// Delivery-side JSON transforms for one response (DESIGN: Transform): a rule's JSON Patch, then
/// null stripping.
///
/// The body is held until it is complete — the only way to deliver invalid JSON untouched — and
/// never more than `max_transform_body` of it: past that the held bytes go out as they are and the
/// rest streams. Compressed bodies are decoded (gzip, deflate, br) and, when a transform changed
/// them, sent decoded with a recomputed `Content-Length` and a weakened `ETag`.
struct JSONBodyDelivery {
    /// What to do with a response, decided at its headers.
    enum Plan: Equatable {
        /// Not a JSON body with content: nothing to do, nothing to say.
        case pass
        /// Deliver untouched and say why (`Sluice-Validation: not-transformed; …`).
        case untouched(String)
        /// Hold the body, then transform it.
        case hold(ContentCoding?)
    }

    /// The result at the end of the body.
    enum Result {
        /// Deliver this head and body instead of the origin's: `patched` operations applied,
        /// `removed` nulls stripped; `note` says why a patch was not applied.
        case transformed(ResponseHead, [UInt8], removed: Int, patched: Int, note: String?)
        /// Deliver the origin's bytes; the note says why (`nil`: valid JSON, nothing to change).
        case untouched(String?)
    }

    let transform: JSONTransform
    let limit: Int
    let head: ResponseHead
    let coding: ContentCoding?

    init(transform: JSONTransform, limit: Int, head: ResponseHead, coding: ContentCoding?) {
        self.transform = transform
        self.limit = limit
        self.head = head
        self.coding = coding
    }

    /// The plan for a final response head.
    static func plan(for head: ResponseHead, request: ProxyRequest, limit: Int) -> Plan {
        if request.method == "HEAD" || head.status < 200 || head.status == 204 || head.status == 205
            || head.status == 304
        {
            return .pass
        }
        guard let contentType = head.headers[.contentType], let media = MediaType(contentType), media.isJSON else {
            return .pass
        }
        if head.status == 206 { return .untouched("a partial response (206) cannot be transformed") }
        if head.headers.tokens(.cacheControl).contains("no-transform") {
            return .untouched("the response says Cache-Control: no-transform")
        }
        if request.headers.tokens(.cacheControl).contains("no-transform") {
            return .untouched("the request says Cache-Control: no-transform")
        }
        let codings = head.headers.tokens(.contentEncoding).filter { $0 != "identity" }
        var coding: ContentCoding?
        if let first = codings.first {
            guard codings.count == 1, let known = ContentCoding(token: first) else {
                return .untouched("Content-Encoding \(codings.joined(separator: ", ")) is not decoded")
            }
            coding = known
        }
        if !head.headers.contains(.transferEncoding), let text = head.headers[.contentLength],
            let length = Int64(text), length > Int64(limit)
        {
            return .untouched(tooLarge(limit))
        }
        return .hold(coding)
    }

    static func tooLarge(_ limit: Int) -> String { "the body is larger than max_transform_body (\(limit) bytes)" }

    /// The paths of the nulls stripping removes from the held body (for a watcher; decodes again).
    func removedPaths(_ held: [UInt8], limit count: Int = 100) -> [String] {
        guard let mode = transform.strip else { return [] }
        var decoded = held
        if let coding {
            guard let bytes = try? coding.decode(held, limit: limit) else { return [] }
            decoded = bytes
        }
        if let patch = transform.patch, case .success(let patched) = patch.apply(to: decoded) { decoded = patched }
        return NullPaths.list(decoded, mode: mode, limit: count)
    }

    /// Patches, then strips, the complete body.
    func finish(_ held: [UInt8]) -> Result {
        var decoded: [UInt8]
        if let coding {
            do {
                decoded = try coding.decode(held, limit: limit)
            } catch .tooLarge {
                return .untouched(JSONBodyDelivery.tooLarge(limit))
            } catch {
                return .untouched("the \(coding.rawValue) body could not be decoded: \(error)")
            }
        } else {
            decoded = held
        }
        if decoded.isEmpty { return .untouched("the body is empty") }
        if decoded == [0x20] { return .untouched("the body is a single space") }
        var patched = 0
        var note: String?
        if let patch = transform.patch {
            switch patch.apply(to: decoded) {
            case .success(let bytes):
                decoded = bytes
                patched = patch.operations.count
            case .failure(let failure):
                note = "json_patch not applied: \(failure)"
            }
        }
        guard let mode = transform.strip else {
            guard patched > 0 else { return .untouched(note) }
            return .transformed(
                transformedHead(length: decoded.count), decoded, removed: 0, patched: patched, note: nil)
        }
        var output: [UInt8] = []
        let outcome = decoded.withUnsafeBytes { NullStripper.strip($0, mode: mode, into: &output) }
        switch outcome {
        case .unchanged:
            guard patched > 0 else { return .untouched(note) }
            return .transformed(
                transformedHead(length: decoded.count), decoded, removed: 0, patched: patched, note: nil)
        case .invalid(let offset):
            return .untouched("the body is not valid JSON (byte \(offset))")
        case .stripped(let removed):
            decoded = []
            return .transformed(
                transformedHead(length: output.count), output, removed: removed, patched: patched, note: note)
        }
    }

    /// The origin's head for the new body: decoded, new length, weak validator, no digests of the old bytes.
    private func transformedHead(length: Int) -> ResponseHead {
        var result = head
        var headers = head.headers
        if coding != nil { headers.remove(.contentEncoding) }
        headers.remove(keys: [
            "content-length", "transfer-encoding", "content-md5", "digest", "content-digest", "repr-digest",
            "accept-ranges", "content-range",
        ])
        if let etag = headers[.etag] {
            let trimmed = etag.trimmingOWS()
            if trimmed.hasPrefix("W/") {
                headers.set("ETag", trimmed)
            } else if trimmed.hasPrefix("\"") {
                headers.set("ETag", "W/" + trimmed)
            } else {
                headers.remove(.etag)
            }
        }
        headers.append(name: "Content-Length", value: String(length), code: .contentLength)
        result.headers = headers
        return result
    }

    /// What a transform did, for the access log and `/events` (`stripped 3 null(s)`, `patched 2 operation(s)`).
    static func summary(removed: Int, patched: Int, note: String?) -> String {
        var parts: [String] = []
        if patched > 0 { parts.append("patched \(patched) operation(s)") }
        if removed > 0 { parts.append("stripped \(removed) null(s)") }
        if let note { parts.append(note) }
        return parts.joined(separator: ", ")
    }

    /// A `Sluice-Validation` member for a body left untouched.
    static func note(_ detail: String, rule: String?) -> String {
        var value = "not-transformed; reason=\"json-not-transformed\"; detail=" + StructuredField.quote(detail)
        if let rule { value += "; rule=" + StructuredField.quote(rule) }
        return value
    }
}
