/// Revalidation (RFC 9111 §4.3) as pure functions: the conditional fields for a stored response,
/// the entry a 304 refreshes, whether a 200 to HEAD confirms a stored GET, and whether a client's
/// own validators match what is stored.
enum Revalidation {
    /// `If-None-Match` / `If-Modified-Since` for a stored response's validators (§4.3.1).
    /// A tag with obs-text (RFC 9110 §8.8.3 allows it) goes as its bytes were stored.
    static func conditions(for entry: CacheStore.Entry) -> [HTTPFields.Field] {
        var conditions: [HTTPFields.Field] = []
        if let etag = entry.headers.fields.first(where: { $0.is(.etag) }) {
            conditions.append(.init(name: "If-None-Match", value: etag.value, code: .ifNoneMatch, opaque: etag.opaque))
        }
        if let modified = entry.headers[.lastModified] {
            conditions.append(.init(name: "If-Modified-Since", value: modified, code: .ifModifiedSince))
        }
        return conditions
    }

    /// A stored entry as a 304 updates it (§4.3.4): merged header fields, new times; a `ttl`
    /// override stays only while the response still states no freshness of its own.
    static func refreshed(
        _ entry: CacheStore.Entry, by response: ResponseHead, requestTime: Double, now: Double,
        facts: (HTTPFields) -> CacheStore.Facts
    ) -> CacheStore.Entry {
        var headers = CachePolicy.merge(entry.headers, with: response.headers)
        // An update without Date is dated on arrival (RFC 9110 §6.6.1): the stored Date would
        // make the refreshed response as old as the first one.
        if !response.headers.contains(.date) { headers.set("Date", HTTPDate.format(Int(now))) }
        return entry.refreshed(
            headers: headers, facts: facts(headers), requestTime: requestTime, responseTime: now,
            ttl: CachePolicy.hasExplicitFreshness(headers) ? nil : entry.ttl)
    }

    /// What a freshening response (§4.3.4 a 304; §4.3.5 a 200 to HEAD that agrees) makes of a
    /// stored entry: `served`, every field merged, answers the client whose request it was;
    /// `kept` is what the cache stores, `nil` when nothing may be: a `no-store` update, or a
    /// `private` one in a shared cache (§5.2.2.5, §5.2.2.7), leaves the stored entry as it was.
    /// An update's `Set-Cookie` is its client's own: served, never kept (unless
    /// `store_set_cookie`), so a hit never hands one client's session to another.
    /// A shared cache keeps nothing of an update to a request with `Authorization` that does not
    /// say it may (§3.5: `public`, `s-maxage`, `must-revalidate`): its fields may be that
    /// client's own.
    static func freshened(
        _ entry: CacheStore.Entry, by response: ResponseHead, requestTime: Double, now: Double,
        shared: Bool, storesSetCookie: Bool, authorized: Bool = false, facts: (HTTPFields) -> CacheStore.Facts
    ) -> (served: CacheStore.Entry, kept: CacheStore.Entry?) {
        // A 304 about another representation than the stored one updates nothing (§4.3.4): the
        // stored response is answered as it is, its pairing of body and validators kept.
        if response.status == 304, !selects(response, entry) { return (entry, nil) }
        let served = refreshed(entry, by: response, requestTime: requestTime, now: now, facts: facts)
        // A 304 whose `Vary` names other fields (or `*`) would leave the entry stored under a
        // selection it no longer has (§4.1): served to its client, not kept.
        if changesVary(response, entry) { return (served, nil) }
        let control = CacheControl(response.headers)
        // `must-understand` overrides `no-store` for the statuses it stores (§5.2.2.3), as when storing.
        if (control.noStore && !control.mustUnderstand) || (shared && control.isPrivate) { return (served, nil) }
        if shared, authorized, !control.isPublic, control.sMaxAge == nil, !control.mustRevalidate {
            return (served, nil)
        }
        guard !storesSetCookie, CachePolicy.setsCookie(response.headers) else { return (served, served) }
        var impersonal = response
        CachePolicy.removeCookies(&impersonal.headers)
        return (served, refreshed(entry, by: impersonal, requestTime: requestTime, now: now, facts: facts))
    }

    /// Whether a 304 names other `Vary` fields than the stored response (or `*`): the entry was
    /// stored under a selection that no longer holds, so the 304 cannot freshen it.
    static func changesVary(_ response: ResponseHead, _ entry: CacheStore.Entry) -> Bool {
        guard response.status == 304, response.headers.contains(.vary) else { return false }
        return Set(CachePolicy.varyNames(response.headers)) != Set(CachePolicy.varyNames(entry.headers))
    }

    /// §4.3.4: the key's other stored responses that a 304 updates as well: those with its strong
    /// validator (an entity tag without `W/`, the same bytes: one representation, whichever
    /// request it was stored for). A weak tag or a date selects only the most recent response that
    /// has it, the one revalidated (``selects(_:_:)``).
    static func alsoSelected(by response: ResponseHead, among others: [CacheStore.Entry]) -> [CacheStore.Entry] {
        guard response.status == 304, !others.isEmpty, let tag = response.headers.comparable(.etag)?.trimmingOWS(),
            !tag.hasPrefix("W/")
        else { return [] }
        return others.filter { other in
            other.headers.comparable(.etag).map { HTTPFields.Field.sameBytes($0.trimmingOWS(), tag) } ?? false
        }
    }

    /// §4.3.4: whether a 304 selects the stored response it revalidated for update: its entity
    /// tag is the entry's, compared weakly (servers switch a tag between its strong and weak
    /// forms, as nginx does when it compresses); without a tag, a `Last-Modified` selects an
    /// entry with the same date. A 304 with no validator answers for the entry whose
    /// validators asked it (servers that omit them are common; the RFC's rule for that case
    /// presumes no stored validator).
    static func selects(_ response: ResponseHead, _ entry: CacheStore.Entry) -> Bool {
        if let tag = response.headers.comparable(.etag)?.trimmingOWS() {
            guard let stored = entry.headers.comparable(.etag)?.trimmingOWS() else { return false }
            func opaque(_ tag: String) -> Substring { tag.hasPrefix("W/") ? tag.dropFirst(2) : tag[...] }
            return HTTPFields.Field.sameBytes(opaque(tag), opaque(stored))
        }
        if let modified = response.headers[.lastModified] {
            guard let stored = entry.headers[.lastModified] else { return false }
            return HTTPDate.parse(modified).map { $0 == HTTPDate.parse(stored) } ?? (modified == stored)
        }
        return true
    }

    /// §4.3.5: whether a 200 to HEAD agrees with the stored GET response it was checked against
    /// (validators present and equal, and any `Content-Length` too). If so the entry is freshened
    /// as by a 304; if not, the URI's stored responses are out of date.
    static func headAgrees(_ response: ResponseHead, with entry: CacheStore.Entry) -> Bool {
        let received = [FieldCode.etag, .lastModified].filter { response.headers.contains($0) }
        return !received.isEmpty
            && (received + [.contentLength]).allSatisfy { name in
                response.headers[name].map { $0.trimmingOWS() == entry.headers[name]?.trimmingOWS() } ?? true
            }
    }

    /// Whether the client's `If-None-Match` (weak comparison) or `If-Modified-Since` fits the stored response.
    static func clientValidatorsMatch(_ request: HTTPFields, stored: HTTPFields) -> Bool {
        if let inm = request.comparable(.ifNoneMatch) {
            guard let etag = stored.comparable(.etag) else { return false }
            let tag = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
            return inm.split(separator: ",").contains { candidate in
                let text = candidate.trimmingOWS()
                return text == "*"
                    || HTTPFields.Field.sameBytes(text.hasPrefix("W/") ? String(text.dropFirst(2)) : text, tag)
            }
        }
        // RFC 9110 §13.1.3: an If-Modified-Since that is not one valid HTTP-date is ignored; it is
        // compared with Last-Modified, or with Date when the response has none.
        if let ims = HTTPDate.parseStrict(single: request.values(.ifModifiedSince)) {
            guard let modified = (stored[.lastModified] ?? stored[.date]).flatMap(HTTPDate.parse) else {
                return false
            }
            return modified <= ims
        }
        return false
    }
}
