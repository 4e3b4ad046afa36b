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
        // A directive given twice counts as first given (§4.2.1), on one line or two.
        let twice = CacheControl(
            Self.fields([
                ("Cache-Control", "max-age=1, s-maxage=2, max-age=3600"),
                ("Cache-Control", "s-maxage=3600, stale-while-revalidate=5, stale-while-revalidate=50"),
            ]))
        #expect(twice.maxAge == 1 && twice.sMaxAge == 2 && twice.staleWhileRevalidate == 5)
        #expect(CacheControl(Self.fields([("Cache-Control", "max-age=x, max-age=60")])).maxAge == 0)
        #expect(CacheControl(Self.fields([("Cache-Control", "max-stale=5, max-stale")])).maxStale == 5)
        // A quoted string ends at its first unescaped quote (RFC 9110 §5.6.4): what it holds is no
        // directive.
        let quoted = CacheControl(Self.fields([("Cache-Control", #"foo="a\", max-age=3600, b", no-store"#)]))
        #expect(quoted.maxAge == nil && quoted.noStore)
        #expect(CacheControl(Self.fields([("Cache-Control", #"max-age="3600""#)])).maxAge == 3600)
        // Whitespace around `=`, or more than delta-seconds, makes the directive invalid: stale.
        for value in ["max-age =3600", "max-age= 3600", "max-age=36 00", "max-age=\"36\"00", "max-age=\"3600"] {
            #expect(CacheControl(Self.fields([("Cache-Control", value)])).maxAge == 0, "\(value)")
        }
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
        // (Which century `94` is depends on the year it is read in: compared with that year.)
        #expect(
            HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT")
                == HTTPDate.parse("Sun, 06 Nov \(HTTPDate.fullYear(twoDigits: 94)) 08:49:37 GMT"))
        // A two-digit year is the latest one not more than 50 years ahead (RFC 9110 §5.6.7).
        let in2026 = HTTPDate.parse("Mon, 07 Dec 2026 00:00:00 GMT")!
        #expect(HTTPDate.fullYear(twoDigits: 70, now: in2026) == 2070)
        #expect(HTTPDate.fullYear(twoDigits: 76, now: in2026) == 2076)
        #expect(HTTPDate.fullYear(twoDigits: 77, now: in2026) == 1977)
        #expect(HTTPDate.fullYear(twoDigits: 26, now: in2026) == 2026)
        #expect(HTTPDate.fullYear(twoDigits: 10, now: HTTPDate.parse("Sat, 01 Jan 2080 00:00:00 GMT")!) == 2110)
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
        // A 206 is stored as a piece only when it answers a Range and names its bytes and length.
        let range = [("Range", "bytes=0-1")]
        #expect(refusal([fresh], status: 206) == "partial")
        #expect(refusal([fresh, ("Content-Range", "bytes 0-1/10")], request: range, status: 206) == nil)
        #expect(refusal([fresh, ("Content-Range", "bytes 0-1/*")], request: range, status: 206) == "partial")
        #expect(
            refusal([fresh, ("Content-Type", "multipart/byteranges; boundary=x")], request: range, status: 206)
                == "partial")
        #expect(
            refusal([fresh, ("Content-Range", "bytes 0-1/10"), ("Content-Length", "5")], request: range, status: 206)
                == "partial")
        // A 200 to a Range is the whole representation.
        #expect(refusal([fresh], request: range) == nil)
        #expect(refusal([fresh], status: 500) == nil)
        #expect(refusal([fresh], status: 304) == "status")
        #expect(refusal([fresh], status: 103) == "status")
        #expect(refusal([("Cache-Control", "max-age=60, no-store")]) == "no-store")
        #expect(refusal([fresh], request: [("Cache-Control", "no-store")]) == "no-store")
        // A GET with content (Content-Length or chunked): its answer may depend on what the key
        // does not hold, so it is never stored; an empty length is no content.
        #expect(refusal([fresh], request: [("Content-Length", "42")]) == "request-content")
        #expect(refusal([fresh], request: [("Transfer-Encoding", "chunked")]) == "request-content")
        #expect(refusal([fresh], request: [("Content-Length", "0")]) == nil)
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
        #expect(refusal([fresh, ("Set-Cookie", "id=1")]) == "set-cookie")
        #expect(refusal([fresh, ("Set-Cookie2", "id=1; Version=1")]) == "set-cookie", "the obsolete Set-Cookie2 too")
    }

    @Test("Any final status with explicit freshness is stored; heuristics only for the statuses that allow them")
    func statusesBeyond200() {
        func refusal(_ status: Int, _ pairs: [(String, String)], shared: Bool = true) -> String? {
            CachePolicy.refusal(
                method: "GET", request: HTTPFields(),
                response: ResponseHead(status: status, headers: Self.fields(pairs)), shared: shared,
                heuristic: .init())?.rawValue
        }
        let date = ("Date", "Sun, 06 Nov 1994 08:49:37 GMT")
        let expires = ("Expires", "Sun, 06 Nov 1994 09:49:37 GMT")
        let heuristic = [date, ("Last-Modified", "Sun, 06 Nov 1994 06:49:37 GMT")]
        for status in [200, 299, 400, 404, 410, 499, 500, 502, 503, 504, 599] {
            #expect(refusal(status, [("Cache-Control", "max-age=60")]) == nil, "\(status) max-age")
            #expect(refusal(status, [("Cache-Control", "s-maxage=60")]) == nil, "\(status) s-maxage")
            #expect(refusal(status, [date, expires]) == nil, "\(status) Expires")
            #expect(refusal(status, [("Cache-Control", "public")] + heuristic) == nil, "\(status) public")
        }
        // §3 / RFC 9110 §15.1: only the heuristically cacheable statuses are kept on a heuristic or for revalidation.
        for status in [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501] {
            #expect(refusal(status, heuristic) == nil, "\(status) heuristic")
        }
        for status in [201, 302, 303, 307, 400, 403, 500, 502, 503, 504, 599] {
            #expect(refusal(status, heuristic) == "status", "\(status) heuristic")
            #expect(refusal(status, [("ETag", "\"a\"")]) == "status", "\(status) validator only")
        }
        // s-maxage means nothing to a private cache; private does.
        #expect(refusal(500, [("Cache-Control", "s-maxage=60")], shared: false) == "status")
        #expect(refusal(500, [("Cache-Control", "private")] + heuristic, shared: false) == nil)
        // must-understand stores only statuses whose rules are implemented.
        #expect(refusal(299, [("Cache-Control", "max-age=60, must-understand")]) == "status")
        #expect(refusal(503, [("Cache-Control", "max-age=60, must-understand, no-store")]) == nil)
    }

    @Test("Set-Cookie responses are stored only when the settings say so")
    func setCookieSetting() {
        let response = ResponseHead(
            status: 200, headers: Self.fields([("Cache-Control", "max-age=60"), ("Set-Cookie", "id=1")]))
        for shared in [true, false] {
            #expect(
                CachePolicy.refusal(
                    method: "GET", request: HTTPFields(), response: response, shared: shared, heuristic: .init(),
                    storeSetCookie: false) == .setCookie)
            #expect(
                CachePolicy.refusal(
                    method: "GET", request: HTTPFields(), response: response, shared: shared, heuristic: .init(),
                    storeSetCookie: true) == nil)
        }
        var settings = Configuration.Cache()
        #expect(!settings.storesSetCookie)
        settings.mode = .private
        #expect(settings.storesSetCookie)
        settings.storeSetCookie = false
        #expect(!settings.storesSetCookie)
    }

    @Test("Expires: one valid HTTP-date in any of the three forms, or already expired (§5.3)")
    func expiresParsing() {
        let date = "Thu, 18 Aug 2050 01:01:18 GMT"
        func lifetime(_ expires: [String]) -> Int64 {
            CachePolicy.freshnessLifetime(
                ResponseHead(status: 200, headers: Self.fields([("Date", date)] + expires.map { ("Expires", $0) })),
                shared: true, heuristic: .init())
        }
        for valid in [
            "Thu, 18 Aug 2050 02:01:18 GMT", "Thursday, 18-Aug-50 02:01:18 GMT", "Thu Aug 18 02:01:18 2050",
            "THU, 18 Aug 2050 02:01:18 GMT", "Thu, 18 AUG 2050 02:01:18 GMT", "Thu, 18 Aug 2050 02:01:18 gMT",
        ] {
            #expect(lifetime([valid]) == 3600, "\(valid)")
        }
        #expect(
            HTTPDate.parseStrict("Thu Aug  8 02:01:18 2050") == HTTPDate.parseStrict("Thu, 08 Aug 2050 02:01:18 GMT"))
        for invalid in [
            "0", "-1", "Thu, 18 Aug 2050 02:01:18 UTC", "Thu, 18 Aug 2050 02:01:18 AEST", "Thu, 18 Aug 50 02:01:18 GMT",
            "Thu 18 Aug 2050 02:01:18 GMT", "Thu, 18  Aug  2050 02:01:18 GMT", "Thu, 18-Aug-2050 02:01:18 GMT",
            "Thu, 18 Aug 2050 02.01.18 GMT", "Thu, 18 Aug 2050 2:01:18 GMT", "Thu, 18 Aug 2050 02:01:18 GMT ",
            "Thu, 31 Feb 2050 02:01:18 GMT", "Thu, 18 Aug 2050 24:01:18 GMT", "Thurs, 18 Aug 2050 02:01:18 GMT",
            "Thu Aug 8 02:01:18 2050", "Thursday, 18 Aug 2050 02:01:18 GMT", "",
        ] {
            #expect(lifetime([invalid]) == 0, "\(invalid)")
        }
        #expect(lifetime(["Thu, 18 Aug 2050 02:01:18 GMT", "Thu, 18 Aug 2050 02:01:19 GMT"]) == 0)
        // The strict parser agrees with the formatter over four centuries.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let seconds = Int.random(in: -2_000_000_000...12_000_000_000, using: &generator)
            #expect(HTTPDate.parseStrict(HTTPDate.format(seconds)) == Int64(seconds))
        }
        #expect(HTTPDate.parseStrict("Sun Nov  6 08:49:37 1994") == 784_111_777)
        #expect(
            HTTPDate.parseStrict("Sunday, 06-Nov-94 08:49:37 GMT")
                == HTTPDate.parseStrict("Sun, 06 Nov \(HTTPDate.fullYear(twoDigits: 94)) 08:49:37 GMT"))
    }

    @Test("Age: the first member of the first line, digits only, saturating (§5.1)")
    func ageParsing() {
        for (lines, expected) in [
            (["7200"], 7200.0), (["7200, 0"], 7200), (["0, 7200"], 0), (["7200", "0"], 7200), (["0", "7200"], 0),
            (["abc"], 0), (["-7200"], 0), (["7200.0"], 0), (["2147483649"], 2_147_483_648), (["7200;foo=bar"], 7200),
            ([" 60 "], 60), ([], 0),
        ] as [([String], Double)] {
            #expect(CachePolicy.ageValue(Self.fields(lines.map { ("Age", $0) })) == expected, "\(lines)")
        }
    }

    @Test("Vary: selecting values compared after normalising lists, case and order of equal weight (§4.1)")
    func varyNormalisation() {
        func same(_ name: String, _ a: [String], _ b: [String]) -> Bool {
            CachePolicy.selector(name, values: a) == CachePolicy.selector(name, values: b)
        }
        #expect(same("foo", ["1, 2"], ["1", "2"]))
        #expect(same("foo", ["1,2"], [" 1, 2 "]))
        #expect(same("foo", ["a  b"], ["a b"]))
        #expect(!same("foo", ["1, 2"], ["2, 1"]))
        #expect(!same("foo", ["A"], ["a"]))
        #expect(same("accept-language", ["en, de"], ["de, en"]))
        #expect(same("accept-language", ["en, de"], ["eN, De"]))
        #expect(same("accept-language", ["en, de"], [" en ,   de"]))
        #expect(same("accept-language", ["en;q=1.0, de;q=0.5"], ["de; q=0.500", "en"]))
        #expect(!same("accept-language", ["en, de;q=0.5"], ["de, en;q=0.5"]))
        #expect(same("accept-encoding", ["gzip, br"], ["BR,GZIP"]))
        #expect(same("accept", ["text/html, application/json;q=0.9"], ["application/json; q=0.9 ,TEXT/HTML"]))
        // Parameter names are case-insensitive, their values need not be (RFC 9110 §8.3.2).
        #expect(same("accept", ["application/json;Profile=\"x/A\""], ["APPLICATION/JSON; profile=\"x/A\""]))
        #expect(!same("accept", ["application/json;profile=\"x/A\""], ["application/json;profile=\"x/a\""]))
        #expect(same("accept", ["a/b;p=\"x;q=0.1\""], ["a/b; p=\"x;q=0.1\""]))
        #expect(!same("accept-encoding", ["gzip"], ["gzip;q=0"]))
        #expect(same("foo", [], []))
        #expect(!same("foo", [], ["1"]))
        #expect(same("foo", ["\"a, b\""], ["\"a, b\""]))
        #expect(!same("foo", ["\"a, b\""], ["\"a,b\""]))
        // Absent is not empty: no Accept-Encoding accepts any coding, an empty one only identity.
        let absent = CachePolicy.variant(names: ["accept-encoding"], request: HTTPFields())
        let empty = CachePolicy.variant(names: ["accept-encoding"], request: HTTPFields([("Accept-Encoding", "")]))
        #expect(absent != empty)
        #expect(absent == "accept-encoding:", "the form entries stored before were written with")
        #expect(
            empty == CachePolicy.variant(names: ["accept-encoding"], request: HTTPFields([("Accept-Encoding", " ")])))
    }

    @Test(
        "An unkeyed field spelt with underscores counts as the dashed one, in any case, unless Vary names it",
        arguments: [
            ("X_Forwarded_Host", [String](), true), ("x_forwarded_HOST", [], true), ("X_Original_URL", [], true),
            ("X_Forwarded_Host", ["x_forwarded_host"], false), ("X_Custom_Thing", [], false),
            ("X-Forwarded-Host", [], false),  // (the dashed spelling is the other check's)
        ])
    func underscoredUnkeyedFields(name: String, varied: [String], refused: Bool) {
        let request = Self.fields([(name, "evil.example")])
        #expect(CachePolicy.hasUnderscoredUnkeyedField(request, varied: varied) == refused)
    }
}
