import Testing

@testable import Sluice

@Suite("Text written into byte buffers")
struct ByteTextTests {
    @Test(
        "Decimals are written as String(value) writes them", arguments: [0, 7, -7, 10, 1_000_000, Int64.max, Int64.min])
    func decimal(value: Int64) {
        var bytes: [UInt8] = Array("x=".utf8)
        bytes.appendDecimal(value)
        #expect(String(decoding: bytes, as: UTF8.self) == "x=\(value)")
    }

    @Test("append(atMost:) grows a buffer by doubling: a thousand lines change its capacity a few times, not each time")
    func appendGrowsGeometrically() {
        var buffer: [UInt8] = []
        var capacities = Set<Int>()
        for _ in 0..<1000 {
            buffer.append(atMost: 120) { $0.put("a line of text\n") }
            capacities.insert(buffer.capacity)
        }
        #expect(buffer.count == 15_000)
        #expect(buffer.suffix(15) == Array("a line of text\n".utf8))
        #expect(capacities.count < 20, "\(capacities.count) capacities")
    }

    @Test("Cache-Status written as bytes is the field's text")
    func cacheStatus() {
        var stored = CacheStatus.forward(.uriMiss, detail: "no-store")
        stored.stored = true
        stored.forwardStatus = 304
        let cases: [(CacheStatus, String)] = [
            (CacheStatus(.hit(ttl: 42)), "Sluice; hit; ttl=42"),
            (
                CacheStatus(.hit(ttl: -3), detail: "stale-while-revalidate"),
                "Sluice; hit; ttl=-3; detail=stale-while-revalidate"
            ),
            (CacheStatus(.forward(.stale), collapsed: true), "Sluice; fwd=stale; collapsed"),
            (stored, "Sluice; fwd=uri-miss; fwd-status=304; stored; detail=no-store"),
            (CacheStatus(.replay), "Sluice; hit; detail=replay"),
        ]
        for (status, text) in cases {
            #expect(status.description == text)
            #expect(text.utf8.count <= status.byteBound)
        }
        // The longest values fit the bound the writers size their room by.
        var longest = CacheStatus(.forward(.varyMiss), forwardStatus: Int.min, collapsed: true, detail: "d")
        longest.stored = true
        #expect(longest.description.utf8.count <= longest.byteBound)
        #expect(longest.description.hasSuffix("; fwd-status=-9223372036854775808; collapsed; stored; detail=d"))
        #expect(CacheStatus(.hit(ttl: .min)).description.utf8.count <= CacheStatus(.hit(ttl: .min)).byteBound)
    }
}
