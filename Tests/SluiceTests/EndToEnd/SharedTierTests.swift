import Foundation
import Logging
import Redis
import SluiceTestKit
import Synchronization
import Testing

@testable import Sluice

/// Two Sluice instances (each with its own SQLite file) and one real `redis-server`: what one
/// stores the other serves; purges and invalidations reach both; private and Vary'd responses
/// stay correct; the tier going away never stops either instance; a torn entry is never served.
@Suite("Shared cache tier (Redis)")
struct SharedTierTests {
    /// An instance on `redis`; `host`: how the url names it (a name is resolved on the loop).
    static func proxy(_ redis: RedisServer, host: String = "127.0.0.1", timeout: String = "200ms") throws
        -> ProxyHarness
    {
        try ProxyHarness(
            configuration: ConfigLoader.load(
                yaml: "cache:\n  shared: { url: \"redis://\(host):\(redis.port)/0\", timeout: \(timeout) }\n"))
    }

    /// A redis-server for the test, or an issue recorded when Debian's is not installed.
    static func redis(clusterNode: Bool = false, password: String? = nil) throws -> RedisServer? {
        guard RedisServer.isInstalled else {
            Issue.record("redis-server is not installed (scripts/setup.sh --tests installs it)")
            return nil
        }
        return try RedisServer(clusterNode: clusterNode, password: password)
    }

    /// Waits until the instance's shared tier is connected.
    static func waitUp(_ proxy: ProxyHarness) -> Bool {
        proxy.waitUntil { proxy.onLoop { $0.tiers?.shared?.isAvailable == true } }
    }

    static func origin() throws -> OriginServer {
        let counter = Mutex(0)
        return try OriginServer { request in
            let n = counter.withLock {
                $0 += 1
                return $0
            }
            let control = request.target.hasPrefix("/private") ? "private, max-age=600" : "max-age=600"
            var headers = [("Cache-Control", control), ("Content-Type", "text/plain")]
            if request.target.hasPrefix("/vary") { headers.append(("Vary", "Accept-Language")) }
            if request.target.hasPrefix("/cookie") { headers.append(("Set-Cookie", "session=\(n)")) }
            let language = request.header("accept-language") ?? "-"
            return .respond(status: 200, headers: headers, body: Array("answer \(n) lang \(language)".utf8))
        }
    }

    @Test("A miss on A, then a hit on B from the shared tier with one origin request; purges and POSTs reach B")
    func sharing() throws {
        guard let redis = try Self.redis() else { return }
        let origin = try Self.origin()
        defer { origin.stop() }
        let a = try Self.proxy(redis)
        let b = try Self.proxy(redis, host: "localhost")
        #expect(Self.waitUp(a) && Self.waitUp(b))
        let url = origin.url("/shared")
        let first = try RawClient(port: a.port).request(RawClient.get(url))
        #expect(first.header("cache-status") == "Sluice; fwd=uri-miss; stored")
        #expect(a.waitUntil { (try? redis.command(["DBSIZE"])) == ":2" }, "the entry and its host index")
        let onB = try RawClient(port: b.port).request(RawClient.get(url))
        #expect(onB.body == first.body)
        #expect(onB.header("cache-status")?.hasPrefix("Sluice; hit") == true)
        #expect(onB.header("cache-status")?.hasSuffix("detail=shared") == true)
        #expect(Int(onB.header("age") ?? "-1").map { $0 >= 0 } == true)
        let again = try RawClient(port: b.port).request(RawClient.get(url))
        #expect(again.header("cache-status")?.contains("detail=shared") == false, "now a local hit on B")
        #expect(origin.requests.count == 1)

        // A purge through A's admin API reaches the tier and B's own file.
        let admin = try a.startAdmin()
        let health = try RawClient(port: admin).request("GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\n\r\n")
        #expect(
            String(decoding: health.body, as: UTF8.self).contains(
                #""shared_cache":{"server":"redis://127.0.0.1:\#(redis.port)/0","state":"up""#))
        let metrics = String(
            decoding: try RawClient(port: admin).request("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\n\r\n")
                .body,
            as: UTF8.self)
        #expect(metrics.contains("sluice_shared_cache_up 1"))
        #expect(metrics.contains(#"sluice_shared_cache_operations_total{operation="store"} 1"#))
        // Which tier holds what: the admin API's list and entry, and what the command line counts.
        let listed = try RawClient(port: admin).request("GET /cache HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\n\r\n")
        #expect(String(decoding: listed.body, as: UTF8.self).contains(#""tiers":["local","shared"],"shared":true"#))
        let searched = try RawClient(port: admin).request(
            "GET /cache?q=shared HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\n\r\n")
        #expect(String(decoding: searched.body, as: UTF8.self).contains(#""tiers":["local","shared"],"shared":true"#))
        var settings = Configuration.Cache.SharedTier()
        settings.port = redis.port
        let census = try SharedTier.censusFromCommandLine(settings: settings, logger: Logger(label: "cli")).get()
        #expect(census.entries == 1 && census.servers == 1 && census.memory > 0)
        #expect(
            try SharedTier.holdsFromCommandLine(
                [url, origin.url("/never")], settings: settings, logger: Logger(label: "cli")
            ).get() == [url])
        let purged = try RawClient(port: admin).request(
            "POST /purge?key=\(url) HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\nContent-Length: 0\r\n\r\n", method: "POST")
        #expect(purged.status == 200)
        #expect(b.waitUntil { b.onLoop { $0.cache?.hasEntries(url) } == false }, "B dropped its copy")
        let afterPurge = try RawClient(port: b.port).request(RawClient.get(url))
        #expect(afterPurge.header("cache-status") == "Sluice; fwd=uri-miss; stored")
        #expect(origin.requests.count == 2)

        // A POST through B invalidates the URL on A too.
        #expect(
            a.waitUntil {
                (try? RawClient(port: a.port).request(RawClient.get(url)))?.header("cache-status")?.contains("hit")
                    == true
            })
        _ = try RawClient(port: b.port).request(
            "POST \(url) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nContent-Length: 1\r\n\r\nx", method: "POST")
        #expect(a.waitUntil { a.onLoop { $0.cache?.hasEntries(url) } == false }, "A dropped its copy")

        // `sluice cache purge` (another process, its own loop) reaches the tier and both instances.
        #expect(
            a.waitUntil {
                (try? RawClient(port: a.port).request(RawClient.get(url)))?.header("cache-status")?.contains("hit")
                    == true
            })
        #expect(
            b.waitUntil {
                (try? RawClient(port: b.port).request(RawClient.get(url)))?.header("cache-status")?.contains("hit")
                    == true
            })
        #expect(
            SharedTier.purgeFromCommandLine(
                .keyOrURL(url), keys: [url], settings: settings, logger: Logger(label: "cli")) == nil)
        #expect(a.waitUntil { a.onLoop { $0.cache?.hasEntries(url) } == false }, "A heard the CLI's purge")
        #expect(b.waitUntil { b.onLoop { $0.cache?.hasEntries(url) } == false }, "B heard the CLI's purge")

        // A host purge announced by A, applied on B through another connection to B's file: B
        // no longer counts the URL as its own, so the copy A then shares is what B serves.
        let entry = String(decoding: SharedRecord.redisKey(prefix: "sluice:", key: url), as: UTF8.self)
        _ = try RawClient(port: a.port).request(RawClient.get(url))
        #expect(a.waitUntil { (try? redis.command(["EXISTS", entry])) == ":1" })
        #expect(try RawClient(port: b.port).request(RawClient.get(url)).header("cache-status")?.contains("hit") == true)
        let hostPurge = try RawClient(port: admin).request(
            "POST /purge?host=127.0.0.1 HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\nContent-Length: 0\r\n\r\n",
            method: "POST")
        #expect(
            hostPurge.status == 200 && hostPurge.text.contains(#""shared":"sent and announced""#), "\(hostPurge.text)"
        )
        #expect(a.waitUntil { (try? redis.command(["EXISTS", entry])) == ":0" })
        let refetched = try RawClient(port: a.port).request(RawClient.get(url))
        #expect(refetched.header("cache-status")?.hasPrefix("Sluice; fwd=uri-miss") == true)
        #expect(a.waitUntil { (try? redis.command(["EXISTS", entry])) == ":1" })
        let requestsBefore = origin.requests.count
        #expect(
            b.waitUntil {
                (try? RawClient(port: b.port).request(RawClient.get(url)))?.header("cache-status")?.hasSuffix(
                    "detail=shared") == true
            })
        #expect(origin.requests.count == requestsBefore, "B asked the tier, not the origin")
        var down = Configuration.Cache.SharedTier()
        let closed = try TestListener()
        down.port = closed.port  // nothing listens there
        closed.close()
        #expect(
            SharedTier.purgeFromCommandLine(.all, keys: [], settings: down, logger: Logger(label: "cli"), timeout: 300)
                != nil)
        #expect(
            (try? SharedTier.holdsFromCommandLine([url], settings: down, logger: Logger(label: "cli"), timeout: 300)
                .get())
                == nil)
    }

    @Test(
        "Credentials in the URL (requirepass, an ACL user, ${VAR}): shared with them; refused without the right ones, never shown"
    )
    func credentials() throws {
        guard let redis = try Self.redis(password: "s3cret/pass") else { return }
        #expect(
            try redis.command(["ACL", "SETUSER", "fleet", "on", ">fleet-pw", "~sluice:*", "&sluice:*", "+@all"])
                == "+OK")
        let origin = try Self.origin()
        defer { origin.stop() }
        setenv("SLUICE_TEST_REDIS_PASSWORD", "fleet-pw", 1)
        func proxy(_ userinfo: String) throws -> ProxyHarness {
            try ProxyHarness(
                configuration: ConfigLoader.load(
                    yaml:
                        "cache:\n  shared: { url: \"redis://\(userinfo)@127.0.0.1:\(redis.port)/0\", timeout: 300ms }\n"
                ))
        }
        let a = try proxy(":s3cret%2Fpass")
        let b = try proxy("fleet:${SLUICE_TEST_REDIS_PASSWORD}")
        let wrong = try proxy(":guess")
        #expect(Self.waitUp(a) && Self.waitUp(b))
        let url = origin.url("/with-credentials")
        _ = try RawClient(port: a.port).request(RawClient.get(url))
        #expect(a.waitUntil { (try? redis.command(["DBSIZE"])) == ":2" })
        let onB = try RawClient(port: b.port).request(RawClient.get(url))
        #expect(onB.header("cache-status")?.hasSuffix("detail=shared") == true)
        // Refused: the instance goes on with its own file and says why, without the password.
        let health = wrong.waitUntil {
            wrong.onLoop { proxy -> Bool in
                if case .down(let reason)? = proxy.tiers?.shared?.health {
                    return reason.contains("refused the credentials")
                }
                return false
            }
        }
        #expect(health)
        // Still the refusal after the next attempts (1 s, then 2 s later): closing the other
        // connection of a refused pair must not replace the reason with "the subscription was lost".
        #expect(
            wrong.waitUntil(timeout: 10) {
                wrong.onLoop { proxy -> Bool in
                    guard let breaker = proxy.tiers?.shared?.breaker else { return false }
                    // The third attempt was refused (an attempt waits again once it failed).
                    return breaker.attempts >= 3 && breaker.retryAt != nil
                }
            })
        let stillRefused = wrong.onLoop { proxy -> String in
            if case .down(let reason)? = proxy.tiers?.shared?.health { return reason }
            return "not down"
        }
        #expect(stillRefused.contains("refused the credentials"), "\(stillRefused)")
        let local = try RawClient(port: wrong.port).request(RawClient.get(url))
        #expect(local.status == 200 && local.header("cache-status")?.contains("detail=shared") == false)
        for line in a.logLines.all + b.logLines.all + wrong.logLines.all {
            #expect(!line.contains("s3cret") && !line.contains("fleet-pw") && !line.contains("guess"), "\(line)")
        }
        #expect(throws: ConfigError.self) {
            try ConfigLoader.load(yaml: "cache:\n  shared: { url: \"rediss://127.0.0.1:6380\" }\n")
        }
        let parsed = try ConfigLoader.load(yaml: "cache:\n  shared: { url: \"redis://u%40x:p%3Aw@h:1/2\" }\n")
        #expect(parsed.cache.sharedTier?.credentials == .init(user: "u@x", password: "p:w"))
        #expect(parsed.cache.sharedTier.map(SharedTier.describe) == "redis://h:1/2")
    }

    @Test(
        "private, an answer to Authorization and a Set-Cookie never leave a private-mode instance; Vary selects across instances"
    )
    func privateAndVary() throws {
        guard let redis = try Self.redis() else { return }
        let origin = try Self.origin()
        defer { origin.stop() }
        let privateMode = try ConfigLoader.load(
            yaml: "cache:\n  mode: private\n  shared: { url: \"redis://127.0.0.1:\(redis.port)\", timeout: 200ms }\n")
        let a = try ProxyHarness(configuration: privateMode)
        let b = try Self.proxy(redis)
        #expect(Self.waitUp(a) && Self.waitUp(b))
        // Stored by A (a private cache), but never shared.
        let mine = try RawClient(port: a.port).request(RawClient.get(origin.url("/private/me")))
        #expect(mine.header("cache-status")?.hasSuffix("stored") == true)
        // A private cache keeps what its user's credentials fetched (RFC 9111 §3.5 binds only
        // shared caches), and a cookie: neither is the tier's, which others read.
        let token = try RawClient(port: a.port).request(
            RawClient.get(origin.url("/auth/me"), extra: "Authorization: Bearer alice\r\n"))
        #expect(token.header("cache-status")?.hasSuffix("stored") == true)
        let cookie = try RawClient(port: a.port).request(RawClient.get(origin.url("/cookie/me")))
        #expect(cookie.header("cache-status")?.hasSuffix("stored") == true && cookie.header("set-cookie") != nil)
        let english = try RawClient(port: a.port).request(
            RawClient.get(origin.url("/vary/doc"), extra: "Accept-Language: en\r\n"))
        #expect(a.waitUntil { (try? redis.command(["DBSIZE"])) == ":2" })
        for path in ["/private/me", "/auth/me", "/cookie/me"] {
            let notMine = try RawClient(port: b.port).request(RawClient.get(origin.url(path)))
            #expect(notMine.header("cache-status")?.contains("hit") == false, "\(path): \(notMine.headers)")
        }
        let german = try RawClient(port: b.port).request(
            RawClient.get(origin.url("/vary/doc"), extra: "Accept-Language: de\r\n"))
        #expect(german.header("cache-status")?.contains("hit") == false)
        #expect(String(decoding: german.body, as: UTF8.self).hasSuffix("lang de"))
        let englishOnB = try RawClient(port: b.port).request(
            RawClient.get(origin.url("/vary/doc"), extra: "Accept-Language: en\r\n"))
        #expect(englishOnB.body == english.body && englishOnB.header("cache-status")?.hasPrefix("Sluice; hit") == true)
    }

    @Test("The host index holds live entries only; a full server's refusals are counted and said, the tier stays up")
    func hostIndexAndFullServer() throws {
        guard let redis = try Self.redis() else { return }
        let origin = try OriginServer { request in
            let seconds = request.target.hasPrefix("/short") ? "1" : "600"
            return .respond(status: 200, headers: [("Cache-Control", "max-age=\(seconds)")], body: Array("x".utf8))
        }
        defer { origin.stop() }
        let a = try Self.proxy(redis)
        #expect(Self.waitUp(a))
        for index in 0..<5 { _ = try RawClient(port: a.port).request(RawClient.get(origin.url("/short/\(index)"))) }
        #expect(a.waitUntil { (try? redis.command(["ZCARD", "sluice:hosts:127.0.0.1"])) == ":5" })
        // A member whose entry expired long ago (its score is when): the next store drops it.
        _ = try redis.command(["ZADD", "sluice:hosts:127.0.0.1", "1", "sluice:{gone}:entry"])
        #expect(try redis.command(["ZCARD", "sluice:hosts:127.0.0.1"]) == ":6")
        _ = try RawClient(port: a.port).request(RawClient.get(origin.url("/long")))
        // (The count is 6 before the store too: it is the old member's going that is waited for.)
        #expect(a.waitUntil { (try? redis.command(["ZCOUNT", "sluice:hosts:127.0.0.1", "-inf", "100"])) == ":0" })
        #expect(try redis.command(["ZCARD", "sluice:hosts:127.0.0.1"]) == ":6")
        // It lives as long as its longest-lived entry (600 s and a minute), not shortened.
        #expect(
            a.waitUntil {
                (try? redis.command(["TTL", "sluice:hosts:127.0.0.1"])).flatMap { Int($0.dropFirst()) }.map { $0 > 600 }
                    == true
            })
        // Full: writes refused (OOM), reads answered; counted, said once.
        _ = try redis.command(["CONFIG", "SET", "maxmemory", "1"])
        _ = try redis.command(["CONFIG", "SET", "maxmemory-policy", "noeviction"])
        for index in 0..<4 { _ = try RawClient(port: a.port).request(RawClient.get(origin.url("/full/\(index)"))) }
        #expect(a.waitUntil { a.onLoop { $0.tiers?.shared?.refusedStores.count ?? 0 } >= 4 })
        #expect(a.onLoop { $0.tiers?.shared?.isAvailable } == true)
        #expect(a.logLines.all.filter { $0.contains("refuses to store (OOM") }.count == 1)
        let admin = try a.startAdmin()
        let metrics = String(
            decoding: try RawClient(port: admin).request("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\n\r\n")
                .body,
            as: UTF8.self)
        let refused = metrics.split(separator: "\n").first {
            $0.hasPrefix(#"sluice_shared_cache_operations_total{operation="refused"}"#)
        }
        #expect(
            refused.flatMap { Int($0.split(separator: " ").last ?? "") }.map { $0 >= 4 } == true, "\(refused ?? "none")"
        )
    }

    @Test(
        "A deletion the tier refuses (a Cluster's CLUSTERDOWN, here an ACL's NOPERM) is kept for the reconnect and counts as a failure"
    )
    func unconfirmedDeletion() throws {
        guard let redis = try Self.redis() else { return }
        let origin = try Self.origin()
        defer { origin.stop() }
        _ = try redis.command(["ACL", "SETUSER", "nodel", "on", ">secret", "~*", "&*", "+@all", "-del", "-unlink"])
        let a = try ProxyHarness(
            configuration: ConfigLoader.load(
                yaml: "cache:\n  shared: { url: \"redis://nodel:secret@127.0.0.1:\(redis.port)/0\", timeout: 200ms }\n")
        )
        #expect(Self.waitUp(a))
        let url = origin.url("/refused")
        _ = try RawClient(port: a.port).request(RawClient.get(url))
        let key = String(decoding: SharedRecord.redisKey(prefix: "sluice:", key: url), as: UTF8.self)
        #expect(a.waitUntil { (try? redis.command(["EXISTS", key])) == ":1" })
        let posted = try RawClient(port: a.port).request(
            "POST \(url) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
        #expect(posted.status == 200)
        #expect(
            a.waitUntil {
                a.onLoop { $0.tiers?.shared?.pending.work } == PendingPurges.Work.some(keys: [url], hosts: [])
            })
        #expect(a.onLoop { $0.tiers?.shared?.counts.failures ?? 0 } >= 1)
        // The command line's purge says so (and exits 75: ``CacheCommandTests``).
        var settings = Configuration.Cache.SharedTier()
        settings.port = redis.port
        settings.credentials = .init(user: "nodel", password: "secret")
        let failure = SharedTier.purgeFromCommandLine(
            .keyOrURL(url), keys: [url], settings: settings, logger: Logger(label: "cli"))
        #expect(failure?.contains("NOPERM") == true, "\(failure ?? "confirmed")")
    }

    @Test(
        "An invalidation made while the tier is out is carried out when it is back: the old response is not served again"
    )
    func invalidationWhileOut() throws {
        guard let redis = try Self.redis() else { return }
        let origin = try Self.origin()
        defer { origin.stop() }
        let a = try Self.proxy(redis)
        #expect(Self.waitUp(a))
        let url = origin.url("/inv")
        let key = String(decoding: SharedRecord.redisKey(prefix: "sluice:", key: url), as: UTF8.self)
        let first = try RawClient(port: a.port).request(RawClient.get(url))
        #expect(a.waitUntil { (try? redis.command(["EXISTS", key])) == ":1" })
        // Another host's entry, for a host purge made while the tier is out.
        let other = "http://localhost:\(origin.port)/inv-other"
        let otherKey = String(decoding: SharedRecord.redisKey(prefix: "sluice:", key: other), as: UTF8.self)
        _ = try RawClient(port: a.port).request(RawClient.get(other))
        #expect(a.waitUntil { (try? redis.command(["EXISTS", otherKey])) == ":1" })
        // The tier goes out (its connections cut; it is tried again a second later) ...
        _ = try redis.command(["CLIENT", "KILL", "TYPE", "normal"])
        #expect(a.waitUntil { a.onLoop { $0.tiers?.shared?.isAvailable } == false })
        // ... and a POST invalidates the URL meanwhile (RFC 9111 §4.4), and a host is purged.
        let posted = try RawClient(port: a.port).request(
            "POST \(url) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
        #expect(posted.status == 200)
        let kept = a.onLoop { shared -> Bool in
            guard let tier = shared.tiers?.shared, !tier.isAvailable else { return false }
            tier.purge(host: "localhost")
            return tier.pending.work != PendingPurges.Work.none
        }
        // (Unless the tier came back first, a second after it went out: then nothing waited.)
        if kept { #expect(a.onLoop { $0.tiers?.shared?.isAvailable } == false) }
        #expect(a.waitUntil(timeout: 10) { a.onLoop { $0.tiers?.shared?.isAvailable } == true })
        #expect(a.onLoop { $0.tiers?.shared?.pending.work } == PendingPurges.Work.none)
        #expect(a.waitUntil { (try? redis.command(["EXISTS", key])) == ":0" })
        if kept { #expect(a.waitUntil { (try? redis.command(["EXISTS", otherKey])) == ":0" }, "the host's entry") }
        let after = try RawClient(port: a.port).request(RawClient.get(url))
        #expect(after.header("cache-status")?.contains("hit") == false, "\(after.headers)")
        #expect(after.body != first.body)
    }

    @Test(
        "Redis killed: both keep answering from their own tiers; restarted: sharing resumes; torn entries are never served"
    )
    func outageAndTornEntries() throws {
        guard let redis = try Self.redis() else { return }
        let origin = try Self.origin()
        defer { origin.stop() }
        let a = try Self.proxy(redis)
        let b = try Self.proxy(redis)
        #expect(Self.waitUp(a) && Self.waitUp(b))
        redis.stop()
        #expect(a.waitUntil { a.onLoop { $0.tiers?.shared?.isAvailable } == false })
        let started = Date()
        let during = try RawClient(port: a.port).request(RawClient.get(origin.url("/during")))
        #expect(during.status == 200 && Date().timeIntervalSince(started) < 1)
        #expect(
            try RawClient(port: a.port).request(RawClient.get(origin.url("/during"))).header("cache-status")?.hasPrefix(
                "Sluice; hit") == true)
        #expect(try RawClient(port: b.port).request(RawClient.get(origin.url("/during"))).status == 200)
        try redis.start()
        #expect(a.waitUntil(timeout: 10) { a.onLoop { $0.tiers?.shared?.isAvailable } == true })
        #expect(b.waitUntil(timeout: 10) { b.onLoop { $0.tiers?.shared?.isAvailable } == true })
        _ = try RawClient(port: a.port).request(RawClient.get(origin.url("/after")))
        #expect(
            a.waitUntil {
                (try? redis.command([
                    "EXISTS",
                    String(
                        decoding: SharedRecord.redisKey(prefix: "sluice:", key: origin.url("/after")), as: UTF8.self),
                ])) == ":1"
            })
        let shared = try RawClient(port: b.port).request(RawClient.get(origin.url("/after")))
        #expect(shared.header("cache-status")?.hasSuffix("detail=shared") == true)

        // A value that is not a whole record (torn, foreign, an old version) is a miss, and removed.
        let tornURL = origin.url("/torn")
        let key = SharedRecord.redisKey(prefix: "sluice:", key: tornURL)
        var valid = SharedRecord(
            key: tornURL, variant: "", varyNames: [], url: tornURL, host: "127.0.0.1", status: 200, reason: "OK",
            headers: HTTPFields([("Cache-Control", "max-age=600"), ("Content-Length", "5")]),
            requestTime: Date().timeIntervalSince1970, responseTime: Date().timeIntervalSince1970, ttl: nil,
            body: Array("whole".utf8)
        ).encoded()
        valid.removeLast(2)
        try redis.raw([Array("SET".utf8), key, valid])
        let torn = try RawClient(port: b.port).request(RawClient.get(tornURL))
        #expect(torn.header("cache-status")?.contains("hit") == false)
        #expect(String(decoding: torn.body, as: UTF8.self).hasPrefix("answer"))
        #expect(b.logLines.all.contains { $0.contains("an entry for \(tornURL) did not check out; removed") })
    }

    @Test("A three-master Redis Cluster: entries spread over the masters are shared, and a resharded slot is followed")
    func cluster() throws {
        guard let first = try Self.redis(clusterNode: true) else { return }
        let nodes = try [first] + (1..<3).map { _ in try RedisServer(clusterNode: true) }
        try RedisServer.makeCluster(nodes)
        let origin = try Self.origin()
        defer { origin.stop() }
        func proxy() throws -> ProxyHarness {
            try ProxyHarness(
                configuration: ConfigLoader.load(
                    yaml:
                        "cache:\n  shared: { url: \"redis://127.0.0.1:\(nodes[0].port)\", cluster: true, timeout: 300ms }\n"
                ))
        }
        let a = try proxy()
        let b = try proxy()
        let c = try proxy()
        #expect(Self.waitUp(a) && Self.waitUp(b) && Self.waitUp(c))
        let urls = (0..<30).map { origin.url("/spread/\($0)") }
        for url in urls { _ = try RawClient(port: a.port).request(RawClient.get(url)) }
        // Every master holds some of them (30 hash tags over three masters).
        #expect(
            a.waitUntil {
                nodes.allSatisfy { node in (try? node.command(["DBSIZE"])).map { $0 != ":0" } == true }
            })
        #expect(
            a.waitUntil { nodes.reduce(0) { $0 + (Int((try? $1.command(["DBSIZE"]))?.dropFirst() ?? "") ?? 0) } >= 31 })
        for url in urls {
            let hit = try RawClient(port: b.port).request(RawClient.get(url))
            #expect(hit.header("cache-status")?.hasSuffix("detail=shared") == true, "\(url)")
        }
        #expect(origin.requests.count == 30)
        var settings = Configuration.Cache.SharedTier()
        settings.port = nodes[0].port
        settings.cluster = true
        let census = try SharedTier.censusFromCommandLine(settings: settings, logger: Logger(label: "cli")).get()
        #expect(census.entries == 30 && census.servers == 3, "\(census)")
        // The first master's slots (and keys) move to the second; C, which read the slot map
        // before, follows the MOVED answers.
        try RedisServer.moveAllSlots(from: nodes[0], to: nodes[1])
        for url in urls {
            let hit = try RawClient(port: c.port).request(RawClient.get(url))
            #expect(hit.header("cache-status")?.hasSuffix("detail=shared") == true, "\(url) after the reshard")
        }
        #expect(origin.requests.count == 30)
        // Purging everything SCANs every master and unlinks what it finds, key by key.
        #expect(
            SharedTier.purgeFromCommandLine(.all, keys: [], settings: settings, logger: Logger(label: "cli")) == nil)
        #expect(
            a.waitUntil { nodes.allSatisfy { node in (try? node.command(["DBSIZE"])) == ":0" } },
            "every master emptied")
    }
}
