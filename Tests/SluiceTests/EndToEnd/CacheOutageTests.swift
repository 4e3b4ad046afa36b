import Foundation
import Sluice
import SluiceTestKit
import Synchronization
import Testing

/// RFC 5861 (stale responses while revalidating and on errors), collapsed forwarding and the
/// rule's will-cache hook, through a running proxy.
@Suite("The cache when origins fail, crowd or say nothing")
struct CacheOutageTests {
    /// An origin whose answer the test switches: a numbered cacheable response, a 503, or a closed connection.
    final class Switchable: Sendable {
        enum Mode { case serve, unavailable, close }
        let mode = Mutex(Mode.serve)
        let served = Mutex(0)
        let cookie = Mutex(false)
        let control: String
        let extra: [(String, String)]
        let delay: Double
        init(control: String, extra: [(String, String)] = [], delay: Double = 0) {
            self.control = control
            self.extra = extra
            self.delay = delay
        }

        func reply(_ request: OriginServer.Request) -> OriginServer.Reply {
            switch mode.withLock({ $0 }) {
            case .unavailable: return .text("down", status: 503)
            case .close: return .close
            case .serve:
                let n = served.withLock {
                    $0 += 1
                    return $0
                }
                let reply = OriginServer.Reply.respond(
                    status: 200,
                    headers: [("Content-Type", "text/plain"), ("Cache-Control", control)] + extra
                        + (cookie.withLock { $0 } ? [("Set-Cookie", "s=1")] : []),
                    body: Array("version \(n)".utf8))
                return delay > 0 ? .delay(seconds: delay, then: reply) : reply
            }
        }
    }

    static func start(_ switchable: Switchable) throws -> OriginServer {
        try OriginServer { switchable.reply($0) }
    }

    /// A proxy with a test clock in front of a switchable origin, and a client with the first response stored.
    struct Stage {
        let origin: OriginServer
        let proxy: ProxyHarness
        let clock = TestClock()
        let client: RawClient

        init(_ switchable: Switchable, priming path: String) throws {
            origin = try CacheOutageTests.start(switchable)
            proxy = try ProxyHarness()
            clock.install(on: proxy)
            client = try RawClient(port: proxy.port)
            #expect(try client.request(RawClient.get(origin.url(path))).text == "version 1")
        }
    }

    @Test("stale-if-error: a 503 or a dead origin gets the stale entry, within the window only")
    func staleIfError() throws {
        let switchable = Switchable(control: "max-age=10, stale-if-error=60")
        let stage = try Stage(switchable, priming: "/s")
        let (origin, clock, client) = (stage.origin, stage.clock, stage.client)
        defer { origin.stop() }
        clock.advance(20)
        switchable.mode.withLock { $0 = .unavailable }
        let on503 = try client.request(RawClient.get(origin.url("/s")))
        #expect(on503.status == 200)
        #expect(on503.text == "version 1")
        #expect(on503.header("cache-status") == "Sluice; fwd=stale; fwd-status=503; detail=stale-if-error")
        #expect(on503.header("age") == "20")
        switchable.mode.withLock { $0 = .close }
        let onReset = try client.request(RawClient.get(origin.url("/s")))
        #expect(onReset.text == "version 1")
        #expect(onReset.header("cache-status") == "Sluice; fwd=stale; detail=stale-if-error")
        // Past max-age + stale-if-error the error reaches the client.
        clock.advance(60)
        switchable.mode.withLock { $0 = .unavailable }
        let late = try client.request(RawClient.get(origin.url("/s")))
        #expect(late.status == 503)
        #expect(late.text == "down")
        // The origin is back: a new response replaces the entry.
        switchable.mode.withLock { $0 = .serve }
        #expect(try client.request(RawClient.get(origin.url("/s"))).text == "version 2")
    }

    @Test("serve_stale_on_error covers origins without a directive; must-revalidate gets 504 instead")
    func configuredWindowAndMustRevalidate() throws {
        let plain = Switchable(control: "max-age=10")
        let strict = Switchable(control: "max-age=10, must-revalidate", extra: [("ETag", "\"m\"")])
        let plainOrigin = try Self.start(plain)
        let strictOrigin = try Self.start(strict)
        defer {
            plainOrigin.stop()
            strictOrigin.stop()
        }
        var configuration = Configuration()
        configuration.cache.serveStaleOnError = 3_600_000
        let proxy = try ProxyHarness(configuration: configuration)
        let clock = TestClock()
        clock.install(on: proxy)
        let client = try RawClient(port: proxy.port)
        _ = try client.request(RawClient.get(plainOrigin.url("/p")))
        _ = try client.request(RawClient.get(strictOrigin.url("/m")))
        clock.advance(600)
        plain.mode.withLock { $0 = .unavailable }
        strict.mode.withLock { $0 = .close }
        let stale = try client.request(RawClient.get(plainOrigin.url("/p")))
        #expect(stale.text == "version 1")
        #expect(stale.header("cache-status")?.hasSuffix("detail=stale-if-error") == true)
        let refused = try client.request(RawClient.get(strictOrigin.url("/m")))
        #expect(refused.status == 504)
        #expect(refused.header("content-type") == "application/problem+json")
        // A client that insists on validation (no-cache) is not given the stale entry either.
        let insisting = try client.request(RawClient.get(plainOrigin.url("/p"), extra: "Cache-Control: no-cache\r\n"))
        #expect(insisting.status == 503)

        // Without the setting, a 503 passes through.
        let bare = try ProxyHarness()
        clock.install(on: bare)
        plain.mode.withLock { $0 = .serve }
        let other = try RawClient(port: bare.port)
        _ = try other.request(RawClient.get(plainOrigin.url("/q")))
        clock.advance(600)
        plain.mode.withLock { $0 = .unavailable }
        #expect(try other.request(RawClient.get(plainOrigin.url("/q"))).status == 503)
    }

    @Test("stale-while-revalidate: the stale entry is served at once and refreshed once in the background")
    func staleWhileRevalidate() throws {
        let switchable = Switchable(control: "max-age=10, stale-while-revalidate=30", delay: 1.0)
        let stage = try Stage(switchable, priming: "/w")
        let (origin, proxy, clock, client) = (stage.origin, stage.proxy, stage.clock, stage.client)
        defer { origin.stop() }
        clock.advance(15)
        let started = Date()
        let stale = try client.request(RawClient.get(origin.url("/w")))
        #expect(Date().timeIntervalSince(started) < 0.8, "served without waiting for the origin")
        #expect(stale.text == "version 1")
        #expect(stale.header("cache-status")?.hasSuffix("detail=stale-while-revalidate") == true)
        // A second stale hit while the refresh runs does not start another one.
        #expect(try client.request(RawClient.get(origin.url("/w"))).text == "version 1")
        #expect(proxy.waitUntil { proxy.stats.cacheStores == 2 })
        let fresh = try client.request(RawClient.get(origin.url("/w")))
        #expect(fresh.text == "version 2")
        #expect(fresh.header("cache-status")?.hasPrefix("Sluice; hit; ttl=") == true)
        #expect(origin.requests.count == 2)
        // Beyond the window the client waits for the origin as usual.
        clock.advance(100)
        let late = try client.request(RawClient.get(origin.url("/w")))
        #expect(late.text == "version 3")
        #expect(late.header("cache-status") == "Sluice; fwd=stale; stored")
    }

    /// Sends one request on each of `count` connections at once, then reads every response.
    static func crowd(_ count: Int, port: UInt16, url: String) throws -> [ReceivedResponse] {
        let clients = try (0..<count).map { _ in try RawClient(port: port) }
        for client in clients { try client.send(RawClient.get(url)) }
        return try clients.map { try $0.reader.readResponse() }
    }

    @Test("Collapsed forwarding: 50 concurrent misses on a known-cacheable URL make one origin request")
    func collapsedForwarding() throws {
        let stage = try Stage(Switchable(control: "max-age=10", delay: 0.3), priming: "/hot")
        let (origin, proxy) = (stage.origin, stage.proxy)
        defer { origin.stop() }
        stage.clock.advance(20)
        let responses = try Self.crowd(50, port: proxy.port, url: origin.url("/hot"))
        #expect(origin.requests.count == 2)
        #expect(responses.allSatisfy { $0.status == 200 && $0.text == "version 2" })
        let collapsed = responses.filter { $0.header("cache-status") == "Sluice; fwd=stale; collapsed" }
        #expect(collapsed.count == 49)
        #expect(proxy.onLoop { $0.collapserWaiting } == 0)
    }

    @Test("Collapsing stops at once for responses that are not shareable; a no-store URL's crowd goes up side by side")
    func collapsingReleases() throws {
        let switchable = Switchable(control: "max-age=10", delay: 0.2)
        let stage = try Stage(switchable, priming: "/c")
        let (origin, proxy) = (stage.origin, stage.proxy)
        let noStore = try OriginServer { _ in
            .delay(
                seconds: 0.5,
                then: .respond(status: 200, headers: [("Cache-Control", "no-store")], body: Array("n".utf8)))
        }
        defer {
            origin.stop()
            noStore.stop()
        }
        stage.clock.advance(20)
        // Known cacheable, but now the origin sets a cookie: the waiters are released at the
        // leader's head and each gets a response of its own.
        switchable.cookie.withLock { $0 = true }
        let crowd = try Self.crowd(10, port: proxy.port, url: origin.url("/c"))
        #expect(crowd.allSatisfy { $0.status == 200 && $0.header("set-cookie") == "s=1" })
        #expect(switchable.served.withLock { $0 } == 11)
        #expect(Set(crowd.map(\.text)).count == 10)
        // A cold no-store URL: the crowd waits for the first head only, then goes upstream side by side.
        let started = Date()
        let crowdNoStore = try Self.crowd(20, port: proxy.port, url: noStore.url("/n"))
        #expect(crowdNoStore.allSatisfy { $0.status == 200 })
        #expect(noStore.requests.count == 20)
        #expect(Date().timeIntervalSince(started) < 3.0, "no-store requests waited for each other")
    }

    @Test("Waiters give up on a fetch held up longer than collapse_timeout and fetch for themselves")
    func collapseTimeout() throws {
        let count = Mutex(0)
        let origin = try OriginServer { _ in
            let n = count.withLock {
                $0 += 1
                return $0
            }
            let reply = OriginServer.Reply.respond(
                status: 200, headers: [("Content-Type", "text/plain"), ("Cache-Control", "max-age=10")],
                body: Array("version \(n)".utf8))
            return n == 2 ? .delay(seconds: 3, then: reply) : reply  // the crowd's leader is slow
        }
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.cache.collapseTimeout = 200
        let proxy = try ProxyHarness(configuration: configuration)
        let clock = TestClock()
        clock.install(on: proxy)
        _ = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/slow")))
        clock.advance(20)
        let started = Date()
        let leader = try RawClient(port: proxy.port)
        try leader.send(RawClient.get(origin.url("/slow")))
        #expect(proxy.waitUntil { origin.requests.count == 2 })
        let crowd = try Self.crowd(5, port: proxy.port, url: origin.url("/slow"))
        #expect(crowd.allSatisfy { $0.status == 200 })
        #expect(Date().timeIntervalSince(started) < 2.5, "the waiters were held for the slow fetch")
        // Each waiter that gave up fetched for itself, or (on a loaded machine, when it gave up a
        // little later) was answered by what another waiter had stored meanwhile.
        #expect((3...7).contains(origin.requests.count), "\(origin.requests.count) origin requests")
        #expect(try leader.reader.readResponse().text == "version 2")
    }

    @Test("A rule's cache block: ttl for responses without freshness (an override), store: false refuses")
    func ruleCacheBlock() throws {
        let origin = try OriginServer { request in
            if request.target.hasPrefix("/ttl") { return .text("no freshness here") }
            return .respond(
                status: 200, headers: [("Cache-Control", "max-age=60"), ("Content-Type", "text/plain")],
                body: Array("cacheable".utf8))
        }
        defer { origin.stop() }
        let configuration = try ConfigLoader.load(
            yaml: """
                rules:
                  - name: pinned
                    match: { path: "/ttl/**" }
                    cache: { ttl: 2m }
                  - name: never
                    match: { path: "/never/**" }
                    cache: false
                """)
        let proxy = try ProxyHarness(configuration: configuration)
        let clock = TestClock()
        clock.install(on: proxy)
        let client = try RawClient(port: proxy.port)
        let first = try client.request(RawClient.get(origin.url("/ttl/a")))
        #expect(first.header("cache-status") == "Sluice; fwd=uri-miss; stored")
        clock.advance(100)
        let hit = try client.request(RawClient.get(origin.url("/ttl/a")))
        #expect(hit.text == "no freshness here")
        #expect(hit.header("cache-status") == "Sluice; hit; ttl=20; detail=ttl-override")
        clock.advance(30)
        #expect(
            try client.request(RawClient.get(origin.url("/ttl/a"))).header("cache-status")
                == "Sluice; fwd=stale; stored")
        let never = try client.request(RawClient.get(origin.url("/never/x")))
        #expect(never.header("cache-status") == "Sluice; fwd=uri-miss; detail=rule")
        #expect(
            try client.request(RawClient.get(origin.url("/never/x"))).header("cache-status")
                == "Sluice; fwd=uri-miss; detail=rule")
        #expect(origin.requests.count == 4)
    }

    @Test("check-config explains a bad cache block")
    func cacheBlockErrors() throws {
        #expect(throws: ConfigError.self) {
            _ = try ConfigLoader.load(yaml: "rules:\n  - cache: { tll: 5m }\n")
        }
        do {
            _ = try ConfigLoader.load(yaml: "rules:\n  - cache: { tll: 5m }\n")
        } catch {
            #expect(error.description.contains("did you mean ttl?"))
        }
        #expect(throws: ConfigError.self) { _ = try ConfigLoader.load(yaml: "rules:\n  - cache: { ttl: 0 }\n") }
        #expect(throws: ConfigError.self) { _ = try ConfigLoader.load(yaml: "rules:\n  - cache: maybe\n") }
    }
}
