import Sluice
import Testing

@Suite("ResponseValidator")
struct ResponseValidatorTests {
    static func acceptance(_ status: [String] = ["200-299"], types: [String]? = nil) -> Acceptance {
        var acceptance = Acceptance()
        acceptance.status = StatusSet(ranges: status.map { StatusSet.parseItem($0)! }, spelled: status)
        acceptance.contentTypes = types.map { $0.map { try! MediaRange.parse($0).get() } }
        return acceptance
    }

    static func request(_ method: String = "GET", headers: [(String, String)] = []) -> UpstreamRequest {
        UpstreamRequest(
            method: method, url: TargetURL(scheme: "http", host: "api.test", port: 80, pathAndQuery: "/v1/x"),
            headers: HTTPFields(headers), body: .none)
    }

    static func head(_ status: Int, type: String?, length: Int? = 10) -> ResponseHead {
        var fields: [(String, String)] = []
        if let type { fields.append(("Content-Type", type)) }
        if let length {
            fields.append(("Content-Length", String(length)))
        } else {
            fields.append(("Transfer-Encoding", "chunked"))
        }
        return ResponseHead(status: status, headers: HTTPFields(fields))
    }

    static func reasons(
        _ head: ResponseHead, _ acceptance: Acceptance, method: String = "GET", headers: [(String, String)] = []
    ) -> [String] {
        ResponseValidator.validate(
            head, request: request(method, headers: headers), acceptance: acceptance, rule: "api"
        )?.reasons.map(\.rawValue) ?? []
    }

    static let json = acceptance(types: ["application/json", "application/*+json"])

    @Test(
        "Status × content type × body presence",
        arguments: [
            // status, content type, body length (nil = chunked), expected reasons
            (200, "application/json", 10, [String]()),
            (200, "application/json; charset=utf-8", 10, []),
            (200, "APPLICATION/JSON", 10, []),
            (200, "application/problem+json", 10, []),
            (200, "text/html", 10, ["unacceptable-content-type"]),
            (200, "text/html", nil, ["unacceptable-content-type"]),
            (200, nil, 10, ["missing-content-type"]),
            (200, nil, 0, []),  // no body, no type: passes
            (200, "text/html", 0, []),  // no content to be wrong
            (204, "text/html", 10, []),
            (205, nil, 10, []),
            (404, "application/json", 10, ["unacceptable-status"]),
            (500, "text/html", 10, ["unacceptable-status", "unacceptable-content-type"]),
            (404, nil, 10, ["unacceptable-status", "missing-content-type"]),
            (302, "text/html", 10, ["unacceptable-content-type"]),  // a redirect passed back is no status failure
            (304, nil, nil, ["unacceptable-status"]),  // 304 to an unconditional request
            (200, "garbage", 10, ["unacceptable-content-type"]),
            (199, "application/json", 10, ["unacceptable-status"]),
        ] as [(Int, String?, Int?, [String])])
    func table(status: Int, type: String?, length: Int?, expected: [String]) {
        #expect(Self.reasons(Self.head(status, type: type, length: length), Self.json) == expected)
    }

    @Test("AFNetworking's edge cases: HEAD, 304 to a conditional request, */* and missing types, no content-type list")
    func edges() {
        #expect(Self.reasons(Self.head(200, type: "text/html"), Self.json, method: "HEAD").isEmpty)
        #expect(
            Self.reasons(Self.head(304, type: nil, length: nil), Self.json, headers: [("If-None-Match", "\"x\"")])
                .isEmpty)
        #expect(
            Self.reasons(Self.head(304, type: nil, length: nil), Self.json, headers: [("If-Modified-Since", "x")])
                .isEmpty)
        #expect(Self.reasons(Self.head(200, type: nil), Self.acceptance(types: ["*/*"])).isEmpty)
        #expect(Self.reasons(Self.head(200, type: "image/png"), Self.acceptance(types: ["image/*"])).isEmpty)
        #expect(Self.reasons(Self.head(200, type: "text/png"), Self.acceptance(types: ["*/png"])).isEmpty)
        #expect(
            Self.reasons(Self.head(200, type: "text/plain"), Self.acceptance(types: ["image/*"])) == [
                "unacceptable-content-type"
            ])
        #expect(
            Self.reasons(Self.head(200, type: "application/json"), Self.acceptance(types: ["application/*+json"])) == [
                "unacceptable-content-type"
            ])
        #expect(Self.reasons(Self.head(200, type: "whatever/thing"), Self.acceptance()).isEmpty)  // no list: any type
        #expect(Self.reasons(Self.head(404, type: "text/html"), Self.acceptance(["200-299", "404"])).isEmpty)
        #expect(Self.reasons(Self.head(418, type: nil), Self.acceptance(["4xx"])).isEmpty)
    }

    @Test("The failure reads like AFNetworking and renders a complete problem")
    func problem() throws {
        let failure = try #require(
            ResponseValidator.validate(
                Self.head(404, type: "text/html"), request: Self.request(), acceptance: Self.json, rule: "api"))
        #expect(
            failure.detail == "Request failed: not found (404); Request failed: unacceptable content-type: text/html")
        let problem = Problem(.validationFailed(failure), url: "http://api.test/v1/x")
        #expect(problem.status == 502)
        #expect(problem.type == "https://sluice.dev/problems/unacceptable-status")
        let body = problem.body
        for member in [
            #""rule":"api""#, #""url":"http://api.test/v1/x""#, #""upstream_status":404"#,
            #""content_type":"text/html""#,
            #""acceptable":{"status":["200-299"],"content_types":["application/json","application/*+json"]}"#,
            #""reasons":["unacceptable-status","unacceptable-content-type"]"#,
        ] {
            #expect(body.contains(member), "\(member) missing from \(body)")
        }
        #expect(
            failure.headerValue
                == #"failed; reason="unacceptable-status"; rule="api", failed; reason="unacceptable-content-type"; rule="api""#
        )
    }

    @Test(
        "Media ranges match Content-Type values: case ignored, parameters and spaces around them too, malformed never",
        arguments: [
            ("application/json", "application/json", true),
            ("application/json", " Application/JSON ; charset=utf-8", true),
            ("application/json", "application/json\t", true),
            ("application/json", "application/jsonx", false),
            ("application/json", "application/jso", false),
            ("application/json", "text/json", false),
            ("application/*+json", "application/problem+json", true),
            ("application/*+json", "application/+json", false),
            ("application/*+json", "application/json", false),
            ("application/*+json", "text/problem+json", false),
            ("application/*+json", "Application/x+JSON;q=1", true),
            ("text/*", "TEXT/html", true),
            ("*/*", "a/b", true),
            ("*/*", "a /b", false),
            ("*/*", "a/b c", false),
            ("*/*", "a/b/c", false),
            ("*/*", "/b", false),
            ("*/*", "a/", false),
            ("*/*", "a", false),
            ("*/*", "a;b/c", false),
            ("*/*", "é/b", false),
            ("*/*", "", false),
        ])
    func ranges(range: String, contentType: String, expected: Bool) throws {
        let parsed = try MediaRange.parse(range).get()
        #expect(parsed.matches(contentType: contentType) == expected)
    }

    @Test("Status items and media ranges parse strictly")
    func parsing() {
        #expect(StatusSet.parseItem("200-299") == 200...299)
        #expect(StatusSet.parseItem("304") == 304...304)
        #expect(StatusSet.parseItem("2xx") == 200...299)
        for bad in ["299-200", "99", "600", "2xx-3xx", "abc", "200-", ""] { #expect(StatusSet.parseItem(bad) == nil) }
        for good in ["application/json", "text/*", "*/*", "application/*+json", "*/json", "Application/JSON"] {
            #expect((try? MediaRange.parse(good).get()) != nil, "\(good)")
        }
        for bad in [
            "json", "application/", "/json", "a b/c", "*/*+json", "text/**", "application/json; charset",
            "application/json;=utf-8", "application/json; charset=",
        ] {
            #expect((try? MediaRange.parse(bad).get()) == nil, "\(bad)")
        }
    }

    @Test("Configured types with parameters mean type/subtype, as in Alamofire: the parameters are not compared")
    func rangesWithParameters() throws {
        let range = try MediaRange.parse("Application/JSON; charset=utf-8").get()
        #expect(range.description == "application/json")
        #expect(range.ignoredParameters == "charset=utf-8")
        let config = try ConfigLoader.load(
            yaml: """
                rules:
                  - name: api
                    match: { host: "api.example" }
                    accept: { content_types: ["application/json; charset=utf-8", "text/*;q=0.5"] }
                """)
        let types = try #require(config.rules.first?.accept?.contentTypes)
        #expect(types.map(\.description) == ["application/json", "text/*"])
        for (contentType, expected) in [
            ("application/json", true), ("application/json; charset=latin1", true), ("text/plain", true),
            ("application/xml", false),
        ] {
            #expect(types.contains { $0.matches(contentType: contentType) } == expected, "\(contentType)")
        }
    }
}
