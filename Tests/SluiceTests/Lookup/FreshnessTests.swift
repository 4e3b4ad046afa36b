import Testing

@testable import Sluice

/// The reuse decision alone: a stored entry of a given age, a request, the settings, `now`.
@Suite("Freshness")
struct FreshnessTests {
    static let now: Double = 2_000_000

    static func entry(
        _ fields: [(String, String)], age: Double, ttl: Int64? = nil, variant: String = "", vary: [String] = []
    ) -> CacheStore.Entry {
        let headers = HTTPFields(fields)
        return CacheStore.Entry(
            key: "http://a/", ref: EntryRef(row: 1), variant: variant, varyNames: vary, status: 200, reason: "OK",
            headers: headers, requestTime: now - age, responseTime: now - age, size: 1, ttl: ttl,
            facts: CacheStore.Facts(headers, shared: true, heuristic: .init()))
    }

    /// The decision in a few words: `fresh …`, `swr`, `revalidate(<forward>, <conditions>, <on failure>)`, `miss …`.
    static func decide(
        _ fields: [(String, String)], age: Double, request: [(String, String)] = [], ttl: Int64? = nil,
        settings: Freshness.Settings = .init()
    ) -> String {
        describe(
            Freshness.decide(
                [entry(fields, age: age, ttl: ttl)], request: .init(HTTPFields(request)), settings: settings, now: now))
    }

    static func describe(_ decision: Freshness.Decision) -> String {
        switch decision {
        case .fresh(_, let age, let ttl, let detail):
            return "fresh age=\(age) ttl=\(ttl)\(detail.map { "; detail=\($0)" } ?? "")"
        case .staleWhileRevalidate(_, let age, _): return "swr age=\(age)"
        case .revalidate(_, let conditions, let failure, let forward):
            let onFailure: String
            switch failure {
            case .fail: onFailure = "fail"
            case .serveStale: onFailure = "stale"
            case .gatewayTimeout: onFailure = "504"
            }
            return "revalidate(\(forward.rawValue), \(conditions.map(\.name).joined(separator: "+")), \(onFailure))"
        case .miss(let miss): return "miss \(miss.rawValue)"
        }
    }

    @Test(
        "Each request directive and stored directive, against fresh and stale entries",
        arguments: [
            // Fresh, and what the request's directives make of it (§5.2.1).
            ([("Cache-Control", "max-age=60")], 10.0, [], "fresh age=10 ttl=50"),
            // The request's own directives pass over a fresh response: fwd=request (RFC 9211 §2.2).
            ([("Cache-Control", "max-age=60")], 10, [("Cache-Control", "max-age=5")], "revalidate(request, , fail)"),
            ([("Cache-Control", "max-age=60")], 10, [("Cache-Control", "min-fresh=55")], "revalidate(request, , fail)"),
            ([("Cache-Control", "max-age=60")], 10, [("Cache-Control", "no-cache")], "revalidate(request, , fail)"),
            ([("Cache-Control", "max-age=60")], 10, [("Pragma", "no-cache")], "revalidate(request, , fail)"),
            // Stale, with validators: revalidated with them (§4.3.1).
            (
                [
                    ("Cache-Control", "max-age=5"), ("ETag", "\"e\""),
                    ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
                ],
                10, [], "revalidate(stale, If-None-Match+If-Modified-Since, fail)"
            ),
            // max-stale: any, or within the bound.
            (
                [("Cache-Control", "max-age=5")], 10, [("Cache-Control", "max-stale")],
                "fresh age=10 ttl=-5; detail=stale"
            ),
            ([("Cache-Control", "max-age=5")], 10, [("Cache-Control", "max-stale=4")], "revalidate(stale, , fail)"),
            (
                [("Cache-Control", "max-age=5")], 10, [("Cache-Control", "max-stale=5")],
                "fresh age=10 ttl=-5; detail=stale"
            ),
            // §4.2.4: stored directives that forbid stale reuse.
            (
                [("Cache-Control", "max-age=5, must-revalidate")], 10, [("Cache-Control", "max-stale")],
                "revalidate(stale, , 504)"
            ),
            (
                [("Cache-Control", "max-age=5, proxy-revalidate")], 10, [("Cache-Control", "max-stale")],
                "revalidate(stale, , 504)"
            ),
            ([("Cache-Control", "s-maxage=5")], 10, [("Cache-Control", "max-stale")], "revalidate(stale, , fail)"),
            ([("Cache-Control", "max-age=60, no-cache")], 10, [], "revalidate(stale, , fail)"),
            // RFC 5861: stale-while-revalidate within its window, not past it, not with min-fresh.
            ([("Cache-Control", "max-age=5, stale-while-revalidate=10")], 10, [], "swr age=10"),
            ([("Cache-Control", "max-age=5, stale-while-revalidate=4")], 10, [], "revalidate(stale, , fail)"),
            (
                [("Cache-Control", "max-age=5, stale-while-revalidate=10")], 10, [("Cache-Control", "min-fresh=1")],
                "revalidate(stale, , fail)"
            ),
            // stale-if-error: the response's or the request's window, the smaller one.
            ([("Cache-Control", "max-age=5, stale-if-error=10")], 10, [], "revalidate(stale, , stale)"),
            ([("Cache-Control", "max-age=5, stale-if-error=4")], 10, [], "revalidate(stale, , fail)"),
            (
                [("Cache-Control", "max-age=5")], 10, [("Cache-Control", "stale-if-error=30")],
                "revalidate(stale, , stale)"
            ),
            (
                [("Cache-Control", "max-age=5, stale-if-error=60")], 10, [("Cache-Control", "stale-if-error=2")],
                "revalidate(stale, , fail)"
            ),
            // no-cache requests take a stale answer on error only when they say stale-if-error.
            (
                [("Cache-Control", "max-age=5, stale-if-error=60")], 10, [("Cache-Control", "no-cache")],
                "revalidate(request, , fail)"
            ),
            (
                [("Cache-Control", "max-age=5")], 10, [("Cache-Control", "no-cache, stale-if-error=60")],
                "revalidate(request, , stale)"
            ),
        ] as [([(String, String)], Double, [(String, String)], String)])
    func directives(stored: [(String, String)], age: Double, request: [(String, String)], expected: String) {
        #expect(Self.decide(stored, age: age, request: request) == expected)
    }

    @Test("serve_stale_on_error applies where neither message gives a window; a rule's ttl wins over the headers")
    func settingsAndOverrides() {
        #expect(
            Self.decide([("Cache-Control", "max-age=5")], age: 10, settings: .init(shared: true, staleOnError: 30))
                == "revalidate(stale, , stale)")
        #expect(
            Self.decide([("Cache-Control", "max-age=5")], age: 100, settings: .init(shared: true, staleOnError: 30))
                == "revalidate(stale, , fail)")
        #expect(
            Self.decide([("Cache-Control", "max-age=5")], age: 10, ttl: 60)
                == "fresh age=10 ttl=50; detail=ttl-override")
        // In a private cache, s-maxage and proxy-revalidate do not forbid stale reuse.
        #expect(
            Self.decide(
                [("Cache-Control", "s-maxage=5, max-age=5")], age: 10, request: [("Cache-Control", "max-stale")],
                settings: .init(shared: false)) == "fresh age=10 ttl=-5; detail=stale")
    }

    @Test("Vary: the candidate whose nominated fields match is chosen; none is a vary-miss; nothing is a uri-miss")
    func varySelection() {
        let english = Self.entry(
            [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")], age: 1,
            variant: CachePolicy.variant(names: ["accept-language"], request: HTTPFields([("Accept-Language", "en")])),
            vary: ["accept-language"])
        func decide(_ language: String) -> String {
            Self.describe(
                Freshness.decide(
                    [english], request: .init(HTTPFields([("Accept-Language", language)])), settings: .init(),
                    now: Self.now))
        }
        #expect(decide("en") == "fresh age=1 ttl=59")
        #expect(decide("fr") == "miss vary-miss")
        #expect(
            Self.describe(Freshness.decide([], request: .init(HTTPFields()), settings: .init(), now: Self.now))
                == "miss uri-miss")
    }
}
