import Sluice
import Testing

@Suite("CacheStatus (RFC 9211)")
struct CacheStatusTests {
    @Test(
        "Each form renders as the field value, parameters in one order",
        arguments: [
            (CacheStatus(.hit(ttl: 42)), "Sluice; hit; ttl=42", "hit"),
            (
                CacheStatus(.hit(ttl: -5), detail: "stale-while-revalidate"),
                "Sluice; hit; ttl=-5; detail=stale-while-revalidate", "hit"
            ),
            (CacheStatus.forward(.uriMiss), "Sluice; fwd=uri-miss", "miss"),
            (CacheStatus.forward(.method), "Sluice; fwd=method", "bypass"),
            (CacheStatus.forward(.request, detail: "no-store"), "Sluice; fwd=request; detail=no-store", "bypass"),
            (CacheStatus(.forward(.stale), forwardStatus: 304), "Sluice; fwd=stale; fwd-status=304", "stale"),
            (
                CacheStatus(.forward(.stale), forwardStatus: 503, detail: "stale-if-error"),
                "Sluice; fwd=stale; fwd-status=503; detail=stale-if-error", "stale_if_error"
            ),
            (CacheStatus(.forward(.varyMiss), collapsed: true), "Sluice; fwd=vary-miss; collapsed", "collapsed"),
        ])
    func renders(status: CacheStatus, field: String, summary: String) {
        #expect(status.description == field)
        #expect(status.summary == summary)
        #expect(status.isHit == field.hasPrefix("Sluice; hit"))
    }

    @Test("Storing adds `stored`; a refusal is the detail")
    func storing() {
        var stored = CacheStatus.forward(.uriMiss)
        stored.stored = true
        #expect(stored.description == "Sluice; fwd=uri-miss; stored")
        var refused = CacheStatus.forward(.miss)
        refused.detail = "no-store"
        #expect(refused.description == "Sluice; fwd=miss; detail=no-store")
    }
}
