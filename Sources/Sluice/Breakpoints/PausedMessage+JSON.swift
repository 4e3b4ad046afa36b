import TLS

extension PausedMessage {
    /// The message as the admin API shows it and a recording keeps it: method, URL, status, the
    /// fields as `[name, value]` pairs, the body as text (or `body_base64`). `bodyLimit` keeps
    /// at most that many body bytes (a recording's `record.max_body`), saying the whole size.
    func json(bodyLimit: Int = .max) -> JSONValue {
        var fields: [(String, JSONValue)] = []
        if let method { fields.append(("method", .string(method))) }
        if let url { fields.append(("url", .string(url))) }
        if let status { fields.append(("status", .number(status))) }
        if let decodedFrom { fields.append(("decoded_from", .string(decodedFrom))) }
        fields.append(("headers", .array((headers ?? []).map { .strings([$0.0, $0.1]) })))
        let whole = body ?? []
        var kept = whole.count > bodyLimit ? Array(whole.prefix(bodyLimit)) : whole
        // A text cut inside a character is cut before it instead (at most 3 bytes back).
        if kept.count < whole.count, String(validating: kept, as: UTF8.self) == nil {
            for back in 1...3 where kept.count > back {
                let shorter = Array(kept.dropLast(back))
                if String(validating: shorter, as: UTF8.self) != nil {
                    kept = shorter
                    break
                }
            }
        }
        if let text = String(validating: kept, as: UTF8.self) {
            fields.append(("body", .string(text)))
        } else {
            fields.append(("body_base64", .string(Digest.base64(kept))))
        }
        if kept.count < whole.count { fields.append(("body_size", .number(whole.count))) }
        return .object(fields)
    }
}
