import Testing

@testable import Sluice

/// What a 304 makes of a stored entry (RFC 9111 §4.3.4), as a pure function of the two and `now`.
@Suite("Revalidation")
struct RevalidationTests {
    static let now = FreshnessTests.now
    static func facts(_ headers: HTTPFields) -> CacheStore.Facts {
        CacheStore.Facts(headers, shared: true, heuristic: .init())
    }

    @Test("A 304 without Date is dated on arrival: the refreshed entry is fresh for the 304's max-age")
    func undatedUpdate() throws {
        // A response stored 100 s ago, stale at once; its 304 says max-age=5 and has no Date.
        let stored = FreshnessTests.entry(
            [("Date", HTTPDate.format(Int(Self.now - 100))), ("ETag", "\"a\""), ("Cache-Control", "max-age=0")],
            age: 100)
        let update = ResponseHead(
            status: 304, headers: HTTPFields([("ETag", "\"a\""), ("Cache-Control", "max-age=5")]))
        let refreshed = Revalidation.freshened(
            stored, by: update, requestTime: Self.now, now: Self.now, shared: true, storesSetCookie: false,
            facts: Self.facts)
        let kept = try #require(refreshed.kept)
        #expect(kept.headers[.date] == HTTPDate.format(Int(Self.now)))
        let decision = Freshness.decide([kept], request: .init(HTTPFields()), settings: .init(), now: Self.now + 1)
        #expect(FreshnessTests.describe(decision).hasPrefix("fresh"), "\(FreshnessTests.describe(decision))")
    }

    @Test("A 304 without Age leaves the stored Age behind: the refreshed entry's age starts again")
    func agelessUpdate() throws {
        // Stored with Age: 150 and max-age=100: stale. The 304 repeats max-age=100, without Age.
        let date = HTTPDate.format(Int(Self.now))
        let stored = FreshnessTests.entry(
            [("Date", date), ("Age", "150"), ("ETag", "\"a\""), ("Cache-Control", "max-age=100")], age: 150)
        let update = ResponseHead(
            status: 304, headers: HTTPFields([("Date", date), ("ETag", "\"a\""), ("Cache-Control", "max-age=100")]))
        let refreshed = Revalidation.freshened(
            stored, by: update, requestTime: Self.now, now: Self.now, shared: true, storesSetCookie: false,
            facts: Self.facts)
        let kept = try #require(refreshed.kept)
        #expect(kept.headers[.age] == nil && refreshed.served.headers[.age] == nil)
        let decision = Freshness.decide([kept], request: .init(HTTPFields()), settings: .init(), now: Self.now + 10)
        #expect(FreshnessTests.describe(decision) == "fresh age=10 ttl=90")
        // A 304 with an Age of its own (a cache above) brings it.
        let aged = ResponseHead(status: 304, headers: HTTPFields([("ETag", "\"a\""), ("Age", "7")]))
        let withAge = Revalidation.freshened(
            stored, by: aged, requestTime: Self.now, now: Self.now, shared: true, storesSetCookie: false,
            facts: Self.facts)
        #expect(withAge.served.headers[.age] == "7")
    }

    @Test("A shared cache keeps nothing of a 304 to a request with Authorization, unless it says it may (§3.5)")
    func authorizedUpdate() {
        let stored = FreshnessTests.entry([("ETag", "\"a\""), ("Cache-Control", "max-age=0")], age: 10)
        for (control, kept) in [("max-age=600", false), ("public, max-age=600", true), ("s-maxage=600", true)] {
            let update = ResponseHead(
                status: 304, headers: HTTPFields([("ETag", "\"a\""), ("Cache-Control", control)]))
            let refreshed = Revalidation.freshened(
                stored, by: update, requestTime: Self.now, now: Self.now, shared: true, storesSetCookie: false,
                authorized: true, facts: Self.facts)
            #expect((refreshed.kept != nil) == kept, "\(control)")
        }
    }

    @Test("Validators compare as bytes: an opaque 0xE9 is not the UTF-8 é, nor NFD the NFC form")
    func validatorsAsBytes() {
        var stored = HTTPFields()
        ([0x22, 0x76, 0xE9, 0x22] as [UInt8]).withUnsafeBytes {
            stored.append(name: "ETag", wireValue: $0, code: .etag)
        }
        func matches(_ condition: [UInt8]) -> Bool {
            var request = HTTPFields()
            condition.withUnsafeBytes { request.append(name: "If-None-Match", wireValue: $0, code: .ifNoneMatch) }
            return Revalidation.clientValidatorsMatch(request, stored: stored)
        }
        #expect(matches([0x22, 0x76, 0xE9, 0x22]))
        #expect(!matches(Array("\"v\u{e9}\"".utf8)))
        let composed = HTTPFields([("ETag", "\"v\u{e9}\"")])
        #expect(!Revalidation.clientValidatorsMatch(HTTPFields([("If-None-Match", "\"ve\u{301}\"")]), stored: composed))
        #expect(Revalidation.clientValidatorsMatch(HTTPFields([("If-None-Match", "\"v\u{e9}\"")]), stored: composed))
        #expect(ByteRange.ifRangeMatches("\"v\u{e9}\"", stored: composed))
        #expect(!ByteRange.ifRangeMatches(HTTPFields.Field.comparable(stored.fields[0]), stored: composed))
    }

    @Test("A 304's strong tag selects every stored response that has it; a weak tag or none selects no other")
    func otherVariantsSelected() {
        let same = FreshnessTests.entry([("ETag", "\"v1\""), ("Vary", "Accept-Language")], age: 10)
        let weak = FreshnessTests.entry([("ETag", "W/\"v1\""), ("Vary", "Accept-Language")], age: 10)
        let other = FreshnessTests.entry([("ETag", "\"v2\""), ("Vary", "Accept-Language")], age: 10)
        let untagged = FreshnessTests.entry([("Vary", "Accept-Language")], age: 10)
        let others = [same, weak, other, untagged]
        func selected(_ fields: [(String, String)], status: Int = 304) -> [CacheStore.Entry] {
            Revalidation.alsoSelected(by: ResponseHead(status: status, headers: HTTPFields(fields)), among: others)
        }
        #expect(selected([("ETag", "\"v1\"")]).map { ObjectIdentifier($0) } == [ObjectIdentifier(same)])
        #expect(selected([("ETag", " \"v1\" ")]).count == 1)
        #expect(selected([("ETag", "W/\"v1\"")]).isEmpty)  // weak: only the response revalidated
        #expect(selected([("Last-Modified", "Sun, 06 Dec 2026 10:00:00 GMT")]).isEmpty)
        #expect(selected([]).isEmpty)
        #expect(selected([("ETag", "\"v1\"")], status: 200).isEmpty)
    }

    @Test("A 304 whose Vary names other fields, or *, is served but not kept; the same names in another order are")
    func varyChangedUpdate() {
        let stored = FreshnessTests.entry(
            [("ETag", "\"a\""), ("Vary", "Accept-Language, Accept-Encoding"), ("Cache-Control", "max-age=0")], age: 10)
        for (vary, kept) in [("*", false), ("X-Other", false), ("accept-encoding, Accept-Language", true)] {
            let update = ResponseHead(
                status: 304, headers: HTTPFields([("ETag", "\"a\""), ("Vary", vary), ("Cache-Control", "max-age=60")]))
            let refreshed = Revalidation.freshened(
                stored, by: update, requestTime: Self.now, now: Self.now, shared: true, storesSetCookie: false,
                facts: Self.facts)
            #expect((refreshed.kept != nil) == kept, "\(vary)")
            #expect(refreshed.served.headers[.vary] == vary)
        }
    }
}
