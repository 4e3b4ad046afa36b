import Redis
import Testing

@Suite("Redis Cluster slots")
struct RedisClusterTests {
    @Test("CRC16/XMODEM mod 16384, of the hash tag's content when there is one")
    func slots() {
        // The check value of CRC-16/XMODEM (Redis Cluster specification, key distribution model).
        #expect(RedisCluster.slot(of: Array("123456789".utf8)) == 0x31C3)
        #expect(
            RedisCluster.slot(of: Array("{user1000}.following".utf8)) == RedisCluster.slot(of: Array("user1000".utf8)))
        #expect(RedisCluster.slot(of: Array("foo{}{bar}".utf8)) == RedisCluster.slot(of: Array("foo{}{bar}".utf8)))
        #expect(
            RedisCluster.slot(of: Array("foo{}{bar}".utf8)) != RedisCluster.slot(of: Array("bar".utf8)),
            "an empty tag is no tag")
        #expect(RedisCluster.slot(of: Array("{a}x".utf8)) == RedisCluster.slot(of: Array("{a}y".utf8)))
        #expect((0..<1000).allSatisfy { RedisCluster.slot(of: Array("k\($0)".utf8)) < RedisCluster.slotCount })
    }
}
