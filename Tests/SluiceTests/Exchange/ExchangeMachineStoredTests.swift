import Testing

@testable import Sluice

/// How the machine answers from a stored response: every ``StoredAnswer`` form, and the enforce
/// verdict that refuses one.
@Suite("ExchangeMachine: serving stored responses")
struct ExchangeMachineStoredTests {
    typealias T = ExchangeMachineTests

    /// The actions of a lookup that finds `entry` for `request` (`acceptance`: a rule's `accept:`).
    static func serve(
        _ request: ProxyRequest, _ entry: CacheStore.Entry, strip: NullStripper.Mode? = nil,
        acceptance: Acceptance? = nil
    ) -> [String] {
        var settings = Configuration.Cache()
        settings.collapseForwarding = true
        var machine = ExchangeMachine(
            .init(
                request: request, url: T.url, transform: JSONTransform(strip: strip), transformLimit: 1 << 20, cache: .init(settings),
                acceptance: acceptance, ruleName: "api"))
        _ = machine.handle(.routed(.forward, transform: JSONTransform(strip: strip), now: T.now))
        return machine.handle(.lookedUp([entry], collapse: T.noCollapse, now: T.now)).map(T.describe)
    }

    static var fresh: CacheStore.Entry {
        T.entry([
            ("Cache-Control", "max-age=60"), ("ETag", "\"v1\""), ("Content-Type", "application/json"),
            ("Content-Length", "3"),
        ])
    }

    @Test("A plain GET hit: the head may come from memory")
    func plain() {
        #expect(Self.serve(T.request(), Self.fresh).last == "serve(age=0)")
    }

    @Test("An HTTP/1.0 client, a HEAD, or a rule that validates: the general path, whole")
    func whole() {
        var old = T.request()
        old.minorVersion = 0
        #expect(Self.serve(old, Self.fresh).last == "serve(age=0, whole)")
        #expect(Self.serve(T.request("HEAD"), Self.fresh).last == "serve(age=0, whole)")
        var report = Acceptance()
        report.onReject = .report
        #expect(Self.serve(T.request(), Self.fresh, acceptance: report).last == "serve(age=0, whole)")
    }

    @Test("Null stripping asked for: whole, through the stripping plan")
    func stripped() {
        #expect(Self.serve(T.request(), Self.fresh, strip: .members).last?.hasPrefix("serve(age=0, whole(") == true)
    }

    @Test("The client's own validator matches: 304 (RFC 9111 §4.3.2)")
    func notModified() {
        #expect(Self.serve(T.request("GET", [("If-None-Match", "\"v1\"")]), Self.fresh).last == "serve(age=0, 304)")
        #expect(Self.serve(T.request("GET", [("If-None-Match", "\"v2\"")]), Self.fresh).last == "serve(age=0)")
    }

    @Test("A Range of a stored 200: 206 with the bytes, 416 past the end, whole when If-Range differs")
    func ranges() {
        #expect(Self.serve(T.request("GET", [("Range", "bytes=1-")]), Self.fresh).last == "serve(age=0, 206 1-2)")
        #expect(Self.serve(T.request("GET", [("Range", "bytes=5-9")]), Self.fresh).last == "serve(age=0, 416 */3)")
        #expect(
            Self.serve(T.request("GET", [("Range", "bytes=1-"), ("If-Range", "\"v0\"")]), Self.fresh).last
                == "serve(age=0, whole)")
        // Under stripping the client's representation is not the stored bytes: whole.
        #expect(
            Self.serve(T.request("GET", [("Range", "bytes=1-")]), Self.fresh, strip: .members).last?.hasPrefix(
                "serve(age=0, whole(") == true)
    }

    @Test("An enforcing rule refuses a stored response it does not accept: 502, nothing served")
    func enforced() {
        var acceptance = Acceptance()
        acceptance.contentTypes = [try! MediaRange.parse("text/html").get()]
        #expect(Self.serve(T.request(), Self.fresh, acceptance: acceptance).last == "fail(502)")
        acceptance.contentTypes = [try! MediaRange.parse("application/*").get()]
        #expect(Self.serve(T.request(), Self.fresh, acceptance: acceptance).last == "serve(age=0, whole)")
    }
}
