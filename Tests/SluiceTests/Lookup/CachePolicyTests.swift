import Testing

@testable import Sluice

@Suite("CachePolicy")
struct CachePolicyTests {
    static func fields(_ pairs: [(String, String)]) -> HTTPFields { HTTPFields(pairs) }

    @Test("Cache-Control directives: case, spaces, quotes, several lines, saturation, unknown ones")
    func directives() {
        let control = CacheControl(
            Self.fields([
                ("Cache-Control", "Max-Age=60 , no-cache=\"Set-Cookie, X\", s-maxage=\"30\""),
                ("cache-control", "MUST-REVALIDATE,private,x-unknown=5, stale-if-error=99999999999"),
            ]))
        #expect(control.maxAge == 60)
        #expect(control.noCache)
        #expect(control.sMaxAge == 30)
        #expect(control.mustRevalidate)
        #expect(control.isPrivate)
        #expect(control.staleIfError == 2_147_483_648)
        let request = CacheControl(Self.fields([("Cache-Control", "max-stale, min-fresh=5, only-if-cached, no-store")]))
        #expect(request.maxStaleAny && request.minFresh == 5 && request.onlyIfCached && request.noStore)
        #expect(CacheControl(Self.fields([("Cache-Control", "max-age=abc")])).maxAge == 0)
    }

    @Test("Freshness: s-maxage > max-age > Expires - Date > heuristic")
    func freshness() {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        func lifetime(_ pairs: [(String, String)], shared: Bool = true) -> Int64 {
            CachePolicy.freshnessLifetime(
                ResponseHead(status: 200, headers: Self.fields(pairs)), shared: shared, heuristic: .init())
        }
        #expect(lifetime([("Cache-Control", "max-age=10, s-maxage=20")]) == 20)
        #expect(lifetime([("Cache-Control", "max-age=10, s-maxage=20")], shared: false) == 10)
        #expect(lifetime([("Date", date), ("Expires", "Sun, 06 Nov 1994 09:49:37 GMT")]) == 3600)
        #expect(lifetime([("Date", date), ("Expires", "0")]) == 0)
        #expect(lifetime([("Date", date), ("Last-Modified", "Sun, 06 Nov 1994 06:49:37 GMT")]) == 720)
        #expect(lifetime([("Date", date), ("Last-Modified", "Sun, 06 Nov 1984 06:49:37 GMT")]) == 86_400)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == HTTPDate.parse(date))
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == HTTPDate.parse(date))
    }

    @Test("HTTP-dates: the three formats, against the C library over four centuries; garbage is nil")
    func dates() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let seconds = Int.random(in: -2_000_000_000...12_000_000_000, using: &generator)
            let text = HTTPDate.format(seconds)
            #expect(HTTPDate.parse(text) == Int64(seconds), "\(text)")
        }
        for bad in [
            "", "yesterday", "Sun, 06 Nov 1994 08:49 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "0", "-1",
            "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37:12 GMT",
        ] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad)")
        }
    }

    @Test("Age per RFC 9111 §4.2.3")
    func age() {
        let headers = Self.fields([("Age", "10")])
        #expect(CachePolicy.currentAge(headers: headers, requestTime: 100, responseTime: 102, now: 130) == 40)
    }

    @Test("Storability in a shared cache")
    func storable() {
        func refusal(
            _ pairs: [(String, String)], request: [(String, String)] = [], status: Int = 200, method: String = "GET"
        ) -> String? {
            CachePolicy.refusal(
                method: method, request: Self.fields(request),
                response: ResponseHead(status: status, headers: Self.fields(pairs)),
                shared: true, heuristic: .init())?.rawValue
        }
        let fresh = ("Cache-Control", "max-age=60")
        #expect(refusal([fresh]) == nil)
        #expect(refusal([fresh], method: "POST") == "method")
        #expect(refusal([fresh], status: 206) == "partial")
        #expect(refusal([fresh], request: [("Range", "bytes=0-1")]) == "partial")
        #expect(refusal([fresh], status: 500) == "status")
        #expect(refusal([("Cache-Control", "max-age=60, no-store")]) == "no-store")
        #expect(refusal([fresh], request: [("Cache-Control", "no-store")]) == "no-store")
        // §5.2.2.3: must-understand with an understood status overrides the response's no-store only.
        let mustUnderstand = ("Cache-Control", "max-age=60, no-store, Must-Understand")
        #expect(refusal([mustUnderstand]) == nil)
        #expect(refusal([mustUnderstand], status: 404) == nil)
        #expect(refusal([mustUnderstand], status: 299) == "status")
        #expect(refusal([mustUnderstand], request: [("Cache-Control", "no-store")]) == "no-store")
        #expect(refusal([("Cache-Control", "private, max-age=60")]) == "private")
        #expect(refusal([fresh], request: [("Authorization", "x")]) == "authorization")
        #expect(refusal([("Cache-Control", "public, max-age=60")], request: [("Authorization", "x")]) == nil)
        #expect(refusal([fresh, ("Vary", "*")]) == "vary-star")
        #expect(refusal([]) == "no-freshness")
        #expect(refusal([("ETag", "\"a\"")]) == nil)
    }
}
