import Testing

@testable import Sluice

@Suite("Shared tier records and settings")
struct SharedRecordTests {
    static let record = SharedRecord(
        key: "http://a/x", variant: "accept-language=en", varyNames: ["accept-language"], url: "http://a/x",
        host: "a", status: 200, reason: "OK",
        headers: HTTPFields([("Cache-Control", "max-age=60"), ("ETag", "\"1\"")]),
        requestTime: 1_700_000_000.25, responseTime: 1_700_000_000.5, ttl: 30,
        body: (0..<70_000).map { UInt8(truncatingIfNeeded: $0) })

    @Test("A record round-trips; any cut, flipped byte or other version is refused")
    func roundTrip() {
        let value = Self.record.encoded()
        #expect(SharedRecord(decoding: value) == Self.record)
        #expect(SharedRecord(decoding: Array(value.dropLast())) == nil)
        var flipped = value
        flipped[value.count / 2] ^= 1
        #expect(SharedRecord(decoding: flipped) == nil)
        var version = value
        version[3] = UInt8(ascii: "2")
        #expect(SharedRecord(decoding: version) == nil)
        #expect(SharedRecord(decoding: []) == nil)
        let key = String(decoding: SharedRecord.redisKey(prefix: "p:", key: "http://a/x"), as: UTF8.self)
        #expect(key.hasPrefix("p:{") && key.hasSuffix("}:entry"))
    }

    @Test("cache.shared: url with a database, prefix, max_entry, timeout, cluster; credentials; no TLS")
    func settings() throws {
        let configuration = try ConfigLoader.load(
            yaml:
                "cache:\n  shared: { url: \"redis://10.0.0.5:6380/2\", prefix: \"team:\", max_entry: 1MiB, timeout: 20ms }\n"
        )
        let tier = try #require(configuration.cache.sharedTier)
        #expect(tier.host == "10.0.0.5" && tier.port == 6380 && tier.database == 2)
        #expect(tier.prefix == "team:" && tier.maxEntry == 1 << 20 && tier.timeout == 20)
        #expect(try ConfigLoader.load(yaml: "cache:\n  shared: none\n").cache.sharedTier == nil)
        // An IPv6 address in brackets; a trailing slash is database 0.
        let six = try #require(
            try ConfigLoader.load(yaml: "cache:\n  shared: { url: \"redis://[::1]:6390/\" }\n").cache.sharedTier)
        #expect(six.host == "::1" && six.port == 6390 && six.database == 0)
        #expect(SharedTier.describe(six) == "redis://[::1]:6390/0")
        // A largest entry the timeout cannot carry is said at start; the defaults are not.
        #expect(ProxyServer.likelyMistakes(configuration).isEmpty)
        let large = try ConfigLoader.load(
            yaml: "cache:\n  shared: { url: \"redis://x\", max_entry: 100MiB, timeout: 50ms }\n")
        #expect(
            ProxyServer.likelyMistakes(large).first?.hasPrefix("cache.shared.max_entry (100 MiB) cannot be read")
                == true)
        for bad in [
            "{ url: \"http://x\" }", "{ url: \"redis://x:0\" }", "{ url: \"redis://u:@x\" }", "{ url: \"rediss://x\" }",
            "{ cluster: true, url: \"redis://x/1\" }",
            "{ prefix: \"p\" }", "{ url: \"redis://x\", extra: 1 }",
            // Purges SCAN prefix*: no prefix, or a glob in it, would take other applications' keys.
            "{ url: \"redis://x\", prefix: \"\" }", "{ url: \"redis://x\", prefix: \"team[ab]:\" }",
            "{ url: \"redis://x\", prefix: \"a*\" }", "{ url: \"redis://[::1\" }",
            "{ url: \"redis://x\", prefix: \"s{x}:\" }",
        ] {
            #expect(throws: ConfigError.self, "\(bad)") { try ConfigLoader.load(yaml: "cache:\n  shared: \(bad)\n") }
        }
    }
}
