import Foundation
import SluiceTestKit
import Testing

@testable import Sluice

/// A resource stored in several variants (`Vary`) and one validator shared between them.
@Suite("Stored variants")
struct CacheVariantTests {
    /// An origin whose answer varies by `Accept-Language` under one entity tag (`tag`), stored
    /// to be revalidated on every use (`no-cache`); a revalidation gets a 304 that makes it fresh
    /// for an hour and says `X-Version: 2`.
    static func origin(tag: String) throws -> OriginServer {
        try OriginServer { request in
            if request.header("if-none-match") == tag {
                return .respond(
                    status: 304,
                    headers: [("ETag", tag), ("Cache-Control", "max-age=3600"), ("X-Version", "2")], body: [])
            }
            let language = request.header("accept-language") ?? "none"
            return .respond(
                status: 200,
                headers: [
                    ("ETag", tag), ("Cache-Control", "no-cache"), ("Vary", "Accept-Language"), ("X-Version", "1"),
                ], body: Array("lang=\(language)".utf8))
        }
    }

    static func get(_ origin: OriginServer, _ language: String) -> String {
        RawClient.get(origin.url("/page"), extra: "Accept-Language: \(language)\r\n")
    }

    @Test("A URL keeps at most cache.max_variants responses that vary; storing one more drops the least recently used")
    func variantsPerURLAreBounded() throws {
        let origin = try OriginServer { request in
            .respond(
                status: 200, headers: [("Cache-Control", "max-age=3600"), ("Vary", "Accept-Language")],
                body: Array("lang=\(request.header("accept-language") ?? "none")".utf8))
        }
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.cache.maxVariants = 3
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        for language in ["a", "b", "c", "d", "e"] {
            #expect(try client.request(Self.get(origin, language)).text == "lang=\(language)")
        }
        let key = origin.url("/page")
        #expect(proxy.onLoop { $0.cache?.candidates(key: key).count } == 3)
        // The newest three are hits; the oldest two went.
        for language in ["c", "d", "e"] {
            let hit = try client.request(Self.get(origin, language))
            #expect(hit.text == "lang=\(language)" && hit.header("cache-status")?.contains("hit") == true)
        }
        #expect(origin.requests.count == 5)
        let gone = try client.request(Self.get(origin, "a"))
        #expect(gone.text == "lang=a" && gone.header("cache-status")?.contains("fwd=") == true)
        #expect(origin.requests.count == 6)
    }

    @Test("A 304 with a strong tag updates every stored variant that has it, not only the one revalidated (§4.3.4)")
    func strongTagUpdatesEveryVariant() throws {
        let origin = try Self.origin(tag: "\"v1\"")
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        // Given two stored variants under one strong tag
        #expect(try client.request(Self.get(origin, "en")).text == "lang=en")
        #expect(try client.request(Self.get(origin, "fr")).text == "lang=fr")
        // When one of them is revalidated, and the origin confirms it for an hour
        let en = try client.request(Self.get(origin, "en"))
        #expect(en.text == "lang=en" && en.header("x-version") == "2")
        // Then the other is fresh too, with the 304's fields, and served without asking the origin
        let fr = try client.request(Self.get(origin, "fr"))
        #expect(fr.text == "lang=fr")
        #expect(fr.header("x-version") == "2")
        #expect(fr.header("cache-status")?.contains("hit") == true, "\(fr.headers)")
        #expect(origin.requests.count == 3)
    }

    @Test("A 304 with a weak tag updates only the variant revalidated; the other asks again")
    func weakTagUpdatesOne() throws {
        let origin = try Self.origin(tag: "W/\"v1\"")
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        _ = try client.request(Self.get(origin, "en"))
        _ = try client.request(Self.get(origin, "fr"))
        #expect(try client.request(Self.get(origin, "en")).header("x-version") == "2")
        let fr = try client.request(Self.get(origin, "fr"))
        #expect(fr.text == "lang=fr")
        #expect(fr.header("cache-status")?.contains("hit") != true, "\(fr.headers)")
        #expect(origin.requests.count == 4)
    }

    @Test("A client's own conditional request for a variant not stored updates the stored ones its strong tag names")
    func clientConditionalOnVaryMiss() throws {
        let origin = try Self.origin(tag: "\"v1\"")
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        _ = try client.request(Self.get(origin, "en"))
        // When a client that holds the "de" representation asks whether it is still "v1"
        let de = try client.request(
            RawClient.get(origin.url("/page"), extra: "Accept-Language: de\r\nIf-None-Match: \"v1\"\r\n"))
        #expect(de.status == 304)
        // Then the stored "en", which has that tag, is fresh from the origin's answer
        let en = try client.request(Self.get(origin, "en"))
        #expect(en.header("cache-status")?.contains("hit") == true, "\(en.headers)")
        #expect(en.header("x-version") == "2" && en.text == "lang=en")
        #expect(origin.requests.count == 2)
    }

    @Test("A background refresh (stale-while-revalidate) confirmed by a strong tag freshens the other variants too")
    func backgroundRefreshUpdatesEveryVariant() throws {
        let tag = "\"v1\""
        let origin = try OriginServer { request in
            if request.header("if-none-match") == tag {
                return .respond(
                    status: 304, headers: [("ETag", tag), ("Cache-Control", "max-age=3600"), ("X-Version", "2")],
                    body: [])
            }
            return .respond(
                status: 200,
                headers: [
                    ("ETag", tag), ("Cache-Control", "max-age=0, stale-while-revalidate=60"),
                    ("Vary", "Accept-Language"), ("X-Version", "1"),
                ], body: Array("lang=\(request.header("accept-language") ?? "none")".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        _ = try client.request(Self.get(origin, "en"))
        _ = try client.request(Self.get(origin, "fr"))
        // When "en" is served stale and refreshed behind the client's back
        let stale = try client.request(Self.get(origin, "en"))
        #expect(stale.header("x-version") == "1")
        // (done when the origin answered and the refresh stored what its 304 says)
        #expect(eventually { origin.requests.count == 3 && proxy.onLoop { $0.refreshesRunning } == 0 })
        // Then "fr", which has the same tag, is fresh from that 304 (a hit, no fourth request)
        let fr = try client.request(Self.get(origin, "fr"))
        #expect(fr.header("x-version") == "2", "\(fr.headers)")
        #expect(fr.header("cache-status")?.contains("hit") == true, "\(fr.headers)")
        #expect(origin.requests.count == 3)
    }
}
