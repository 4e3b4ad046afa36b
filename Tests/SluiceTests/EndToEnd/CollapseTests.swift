import Foundation
import Sluice
import SluiceTestKit
import Synchronization
import Testing

/// Collapsed forwarding on cold misses (Varnish's waiting list) and hit-for-miss, through a
/// real proxy and origin.
@Suite("Collapsed forwarding on cold misses")
struct CollapseTests {
    /// An origin answering every request after `delay` seconds with a numbered body.
    static func slowOrigin(delay: Double, headers: [(String, String)]) throws -> OriginServer {
        let counter = Mutex(0)
        return try OriginServer { _ in
            let n = counter.withLock {
                $0 += 1
                return $0
            }
            return .delay(
                seconds: delay,
                then: .respond(
                    status: 200, headers: [("Content-Type", "text/plain")] + headers,
                    body: Array("answer \(n) ".utf8) + [UInt8](repeating: 0x61, count: 4096)))
        }
    }

    /// One request on each of `count` connections at once; the responses, and when the last one
    /// was read whole (seconds after sending).
    static func crowd(_ count: Int, port: UInt16, url: String) throws -> ([ReceivedResponse], Double) {
        let clients = try (0..<count).map { _ in try RawClient(port: port) }
        let started = Date()
        for client in clients { try client.send(RawClient.get(url)) }
        let responses = try clients.map { try $0.reader.readResponse() }
        return (responses, Date().timeIntervalSince(started))
    }

    @Test("20 cold GETs of a cacheable URL that takes 1 s: one origin request, 20 identical bodies within 1.2 s")
    func coldCrowd() throws {
        let origin = try Self.slowOrigin(delay: 1.0, headers: [("Cache-Control", "max-age=60")])
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let (responses, elapsed) = try Self.crowd(20, port: proxy.port, url: origin.url("/cold"))
        #expect(origin.requests.count == 1)
        #expect(responses.allSatisfy { $0.status == 200 && $0.body == responses[0].body })
        #expect(responses[0].text.hasPrefix("answer 1 "))
        #expect(elapsed < 1.2, "the last of 20 bodies arrived after \(elapsed) s")
        #expect(responses.filter { $0.header("cache-status")?.hasSuffix("collapsed") == true }.count == 19)
        #expect(proxy.onLoop { $0.collapserWaiting } == 0)
    }

    @Test("20 GETs of a no-store URL that takes 1 s go upstream side by side, cold or known (hit-for-miss)")
    func noStoreCrowd() throws {
        // Cold: the head comes at once and the body takes a second; the waiters are released at the
        // head and fetch in parallel.
        let dripping = try OriginServer { _ in
            .drip(
                head: "HTTP/1.1 200 OK\r\nCache-Control: no-store\r\nContent-Length: 5\r\n\r\n",
                body: Array("drips".utf8), interval: 0.2)
        }
        defer { dripping.stop() }
        let proxy = try ProxyHarness()
        let (cold, coldTime) = try Self.crowd(20, port: proxy.port, url: dripping.url("/n"))
        #expect(cold.allSatisfy { $0.status == 200 && $0.text == "drips" })
        #expect(dripping.requests.count == 20)
        #expect(coldTime < 1.6, "cold no-store requests waited for each other: \(coldTime) s")

        // Known (remembered as uncacheable): nobody waits even for the head.
        let slow = try Self.slowOrigin(delay: 1.0, headers: [("Cache-Control", "no-store")])
        defer { slow.stop() }
        _ = try RawClient(port: proxy.port).request(RawClient.get(slow.url("/m")))
        let (known, knownTime) = try Self.crowd(20, port: proxy.port, url: slow.url("/m"))
        #expect(known.allSatisfy { $0.status == 200 })
        #expect(Set(known.map(\.text)).count == 20)
        #expect(slow.requests.count == 21)
        #expect(knownTime < 1.6, "known no-store requests waited for each other: \(knownTime) s")
    }

    @Test("A leader whose client leaves does not cancel the fetch its waiters depend on")
    func leaderLeaves() throws {
        let origin = try Self.slowOrigin(delay: 0.6, headers: [("Cache-Control", "max-age=60")])
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let leader = try RawClient(port: proxy.port)
        try leader.send(RawClient.get(origin.url("/orphan")))
        #expect(proxy.waitUntil { origin.requests.count == 1 })
        let waiters = try (0..<5).map { _ in try RawClient(port: proxy.port) }
        for waiter in waiters { try waiter.send(RawClient.get(origin.url("/orphan"))) }
        #expect(proxy.waitUntil { proxy.onLoop { $0.collapserWaiting } == 5 })
        leader.socket.close()  // before the origin's head
        let responses = try waiters.map { try $0.reader.readResponse() }
        #expect(responses.allSatisfy { $0.status == 200 && $0.text.hasPrefix("answer 1 ") })
        #expect(responses.allSatisfy { $0.header("cache-status")?.hasSuffix("collapsed") == true })
        #expect(origin.requests.count == 1)
        #expect(proxy.waitUntil { proxy.onLoop { $0.collapserOrphans } == 0 })
        #expect(proxy.stats.cacheStores == 1)

        // Leaving while the body streams: the entry is still completed for the waiters.
        let streaming = try OriginServer { _ in
            .drip(
                head: "HTTP/1.1 200 OK\r\nCache-Control: max-age=60\r\nContent-Length: 6\r\n\r\n",
                body: Array("orphan".utf8), interval: 0.1)
        }
        defer { streaming.stop() }
        var hits = proxy.stats.cacheHits
        let second = try RawClient(port: proxy.port)
        try second.send(RawClient.get(streaming.url("/drip")))
        #expect(proxy.waitUntil { streaming.requests.count == 1 })
        let waiter = try RawClient(port: proxy.port)
        try waiter.send(RawClient.get(streaming.url("/drip")))
        // The waiter takes the entry as it is written (read-while-write).
        #expect(proxy.waitUntil { proxy.stats.cacheHits == hits + 1 })
        // The head (and a byte or two) reached the leader's client before it leaves.
        #expect(try !second.socket.receive().isEmpty)
        second.socket.close()
        let response = try waiter.reader.readResponse()
        #expect(response.text == "orphan")
        #expect(streaming.requests.count == 1)
        #expect(proxy.waitUntil { proxy.onLoop { $0.collapserOrphans } == 0 })

        // A leader whose client never read (the transfer paused for it) and then left: resumed.
        let large = try OriginServer(keepBodies: false) { _ in
            .stream(status: 200, headers: [("Cache-Control", "max-age=60")], total: 16 << 20)
        }
        defer { large.stop() }
        hits = proxy.stats.cacheHits
        let stuck = try RawClient(port: proxy.port)
        try stuck.send(RawClient.get(large.url("/big")))
        #expect(proxy.waitUntil { large.requests.count == 1 })
        let patient = try RawClient(port: proxy.port, timeout: 30)
        try patient.send(RawClient.get(large.url("/big")))
        #expect(proxy.waitUntil { proxy.stats.cacheHits == hits + 1 })
        // The client's buffers fill and the transfer pauses: the origin stops sending.
        #expect(settled { large.streamedBytes } != nil)
        stuck.socket.close()
        let whole = try patient.reader.readResponse()
        #expect(whole.status == 200 && whole.body.count == 16 << 20)
        #expect(large.requests.count == 1)
        #expect(proxy.waitUntil { proxy.onLoop { $0.collapserOrphans } == 0 })
    }

    @Test("Read-while-write: waiters get the head and the body as it is stored, long before it is whole")
    func readWhileWrite() throws {
        let pieces = (0..<16).map { n in [UInt8](repeating: UInt8(65 + n), count: 64 * 1024) }
        let origin = try OriginServer { _ in
            .paced(
                status: 200, headers: [("Cache-Control", "max-age=60")], pieces: pieces, interval: 0.1, declared: nil)
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let leader = try RawClient(port: proxy.port)
        try leader.send(RawClient.get(origin.url("/video")))
        #expect(proxy.waitUntil { origin.requests.count == 1 })
        let started = Date()
        let waiters = try (0..<5).map { _ in try RawClient(port: proxy.port, timeout: 20) }
        for waiter in waiters { try waiter.send(RawClient.get(origin.url("/video"))) }
        // Every waiter has the head and the first 64 KiB while the origin is still sending (1.6 s).
        for waiter in waiters {
            let head = try #require(try waiter.reader.readHead())
            #expect(head.startLine.hasPrefix("HTTP/1.1 200"))
            #expect(head.fields.contains { $0.0.lowercased() == "cache-status" && $0.1.hasSuffix("collapsed") })
            #expect(try waiter.reader.readExactly(64 * 1024) == pieces[0])
        }
        let firstBytes = Date().timeIntervalSince(started)
        #expect(firstBytes < 1.0, "waiters' first bytes after \(firstBytes) s")
        let whole = pieces.flatMap { $0 }
        for waiter in waiters {
            #expect(try waiter.reader.readExactly(whole.count - 64 * 1024) == Array(whole[(64 * 1024)...]))
        }
        #expect(try leader.reader.readResponse().body == whole)
        #expect(origin.requests.count == 1)
        #expect(proxy.waitUntil { proxy.stats.cacheStores == 1 })
    }

    @Test("Read-while-write: an entry given up midway cuts the waiters' connections, never a short body")
    func readWhileWriteAbort() throws {
        let pieces = (0..<4).map { n in [UInt8](repeating: UInt8(65 + n), count: 64 * 1024) }
        let origin = try OriginServer { _ in
            .paced(
                status: 200, headers: [("Cache-Control", "max-age=60")], pieces: pieces, interval: 0.1,
                declared: 1 << 20)
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let leader = try RawClient(port: proxy.port)
        try leader.send(RawClient.get(origin.url("/cut")))
        #expect(proxy.waitUntil { origin.requests.count == 1 })
        let waiter = try RawClient(port: proxy.port, timeout: 10)
        try waiter.send(RawClient.get(origin.url("/cut")))
        let head = try #require(try waiter.reader.readHead())
        #expect(head.startLine.hasPrefix("HTTP/1.1 200"))
        #expect(throws: (any Error).self) { _ = try waiter.reader.readExactly(1 << 20) }
        #expect(proxy.stats.cacheStores == 0)
        // Given up before a chunk was flushed: the waiter still has its head at once, then the cut.
        let trickle = try OriginServer { _ in
            .paced(
                status: 200, headers: [("Cache-Control", "max-age=60")],
                pieces: Array(repeating: Array("AAAAA".utf8), count: 3),
                interval: 0.3, declared: 100)
        }
        defer { trickle.stop() }
        let second = try RawClient(port: proxy.port)
        try second.send(RawClient.get(trickle.url("/trickle")))
        #expect(proxy.waitUntil { trickle.requests.count == 1 })
        let late = try RawClient(port: proxy.port, timeout: 10)
        try late.send(RawClient.get(trickle.url("/trickle")))
        let lateHead = try #require(try late.reader.readHead())
        #expect(lateHead.startLine.hasPrefix("HTTP/1.1 200"))
        #expect(throws: (any Error).self) { _ = try late.reader.readExactly(100) }
    }

    @Test("A body of unknown length that outgrows the entry limit reaches every collapsed client whole")
    func unknownLengthOverTheLimit() throws {
        let pieces = (0..<8).map { n in [UInt8](repeating: UInt8(65 + n), count: 32 * 1024) }
        let origin = try OriginServer { _ in
            .delay(
                seconds: 0.3, then: .chunked(status: 200, headers: [("Cache-Control", "max-age=60")], chunks: pieces))
        }
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.cache.maxEntrySize = 100 * 1024
        let proxy = try ProxyHarness(configuration: configuration)
        let (responses, _) = try Self.crowd(3, port: proxy.port, url: origin.url("/grows"))
        let whole = pieces.flatMap { $0 }
        // The waiters were not given the entry being written (it was given up at 100 KiB): they
        // fetched it themselves.
        #expect(responses.map(\.body) == Array(repeating: whole, count: 3))
    }

    @Test("A private response never reaches a waiter; the URL is then fetched side by side")
    func privateNeverShared() throws {
        let origin = try Self.slowOrigin(delay: 0.3, headers: [("Cache-Control", "private, max-age=60")])
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let (responses, _) = try Self.crowd(10, port: proxy.port, url: origin.url("/me"))
        #expect(responses.allSatisfy { $0.status == 200 })
        #expect(Set(responses.map(\.text)).count == 10, "a waiter was given another client's private response")
        #expect(origin.requests.count == 10)
        #expect(proxy.stats.cacheHits == 0)
    }

    @Test("A URL found uncacheable collapses again once a response is stored for everyone")
    func hitForMissEnds() throws {
        let cacheable = Mutex(false)
        let counter = Mutex(0)
        let origin = try OriginServer { _ in
            let n = counter.withLock {
                $0 += 1
                return $0
            }
            let control = cacheable.withLock { $0 } ? "max-age=60" : "no-store"
            return .delay(
                seconds: 0.3,
                then: .respond(status: 200, headers: [("Cache-Control", control)], body: Array("v\(n)".utf8)))
        }
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.cache.uncacheableTTL = 600_000
        let proxy = try ProxyHarness(configuration: configuration)
        let clock = TestClock()
        clock.install(on: proxy)
        let client = try RawClient(port: proxy.port)
        _ = try client.request(RawClient.get(origin.url("/flip")))  // remembered as uncacheable
        cacheable.withLock { $0 = true }
        _ = try client.request(RawClient.get(origin.url("/flip")))  // stored for everyone: forgotten
        #expect(proxy.waitUntil { proxy.stats.cacheStores == 1 })
        // Stale (well within the 600 s the mark would have lasted): the crowd collapses again.
        clock.advance(61)
        let (crowd, _) = try Self.crowd(10, port: proxy.port, url: origin.url("/flip"))
        #expect(crowd.allSatisfy { $0.text == crowd[0].text })
        #expect(origin.requests.count == 3)
    }
}
