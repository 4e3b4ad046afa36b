import EventIO
import Testing

@testable import Sluice

/// Pins down collapsed forwarding's bookkeeping: leaders, waiting lists, hit-for-miss and orphans.
@Suite("Collapser: who fetches a key, who waits for it, what is not collapsed")
struct CollapserTests {
    final class Waiter: CollapseWaiter {
        var released = 0
        func collapseReleased() { released += 1 }
        func collapseMayStream(_ writer: CacheWriter) {}
    }

    @Test("A miss waits only behind a key being fetched; a waiter that leaves is off the list")
    func joining() {
        let collapser = Collapser()
        let waiter = Waiter()
        #expect(!collapser.join("http://a/x", waiter), "nobody fetches it: this one leads")
        #expect(collapser.waiting == 0)
        collapser.lead("http://a/x")
        #expect(collapser.isFetching("http://a/x"))
        #expect(!collapser.isFetching("http://a/y"))
        #expect(!collapser.join("http://a/y", waiter))
        #expect(collapser.join("http://a/x", waiter))
        #expect(collapser.join("http://a/x", Waiter()))
        #expect(collapser.waiting == 2)
        collapser.leave("http://a/x", waiter)
        collapser.leave("http://a/x", waiter)
        #expect(collapser.waiting == 1, "leaving twice removes one waiter once")
        #expect(collapser.liveWriter("http://a/x") == nil, "nothing shared yet")
    }

    @Test("Release ends the fetch at once and tells every remaining waiter at the next loop turn")
    func release() throws {
        let loop = try EventLoop()
        let collapser = Collapser()
        let first = Waiter()
        let second = Waiter()
        let gone = Waiter()
        collapser.lead("k")
        for waiter in [first, gone, second] { _ = collapser.join("k", waiter) }
        collapser.leave("k", gone)
        collapser.release("k", loop: loop)
        #expect(!collapser.isFetching("k"))
        #expect(collapser.waiting == 0)
        #expect(first.released == 0 && second.released == 0, "never inside the releasing call")
        loop.callSoon { loop.stop() }
        loop.run()
        #expect(first.released == 1 && second.released == 1)
        #expect(gone.released == 0, "a waiter that left is not told")
        #expect(!collapser.join("k", first), "the next miss leads instead of waiting")
    }

    @Test("Hit-for-miss lasts until its time (exclusive); an expired key is dropped; storing clears it")
    func uncacheable() {
        let collapser = Collapser()
        #expect(!collapser.isUncacheable("k", now: 0))
        collapser.rememberUncacheable("k", until: 100, now: 0)
        #expect(collapser.isUncacheable("k", now: 99.5))
        #expect(!collapser.isUncacheable("k", now: 100))
        #expect(!collapser.isUncacheable("k", now: 50), "the expired key was forgotten when looked at")
        collapser.rememberUncacheable("j", until: 100, now: 0)
        collapser.forgetUncacheable("j")
        #expect(!collapser.isUncacheable("j", now: 0))
    }

    @Test("Hit-for-miss keys remembered in turn each last until their own time; renewing and forgetting reach each")
    func uncacheableInTurn() {
        let collapser = Collapser()
        collapser.rememberUncacheable("k", until: 100, now: 0)
        collapser.rememberUncacheable("j", until: 50, now: 0)
        #expect(collapser.isUncacheable("k", now: 60) && collapser.isUncacheable("j", now: 10))
        collapser.rememberUncacheable("k", until: 200, now: 10)
        #expect(collapser.isUncacheable("k", now: 150), "renewed after another key")
        #expect(!collapser.isUncacheable("j", now: 50))
        collapser.rememberUncacheable("j", until: 300, now: 60)
        collapser.rememberUncacheable("k", until: 400, now: 60)
        collapser.forgetUncacheable("j")
        #expect(!collapser.isUncacheable("j", now: 70))
        #expect(collapser.isUncacheable("k", now: 350))
        collapser.forgetUncacheable("k")
        #expect(!collapser.isUncacheable("k", now: 70))
        collapser.rememberUncacheable("k", until: 100, now: 0)
        collapser.rememberUncacheable("k", until: 80, now: 0)
        #expect(!collapser.isUncacheable("k", now: 90), "the latest time counts, even an earlier one")
    }

    @Test("At the limit, a new hit-for-miss key drops the expired ones first")
    func limitDropsExpired() {
        let collapser = Collapser()
        for n in 0..<Collapser.uncacheableLimit {
            collapser.rememberUncacheable("k\(n)", until: n.isMultiple(of: 2) ? 10 : 1000, now: 0)
        }
        collapser.rememberUncacheable("new", until: 1000, now: 20)
        #expect(collapser.isUncacheable("new", now: 20))
        #expect(!collapser.isUncacheable("k0", now: 5), "expired at 20: dropped")
        #expect(collapser.isUncacheable("k1", now: 20), "still live: kept")
    }

    @Test("Long keys count by their bytes: distinct 100 KB URLs do not pile up past the byte limit")
    func limitByBytes() {
        let collapser = Collapser()
        let padding = String(repeating: "q", count: 100_000)
        let count = Collapser.uncacheableByteLimit / 100_000 + 5
        for n in 0..<count { collapser.rememberUncacheable("http://a/?\(n)\(padding)", until: 1000, now: 0) }
        #expect(!collapser.isUncacheable("http://a/?0\(padding)", now: 1), "the table was emptied at the limit")
        #expect(collapser.isUncacheable("http://a/?\(count - 1)\(padding)", now: 1))
        #expect(collapser.isUncacheable("http://a/?\(count - 2)\(padding)", now: 1), "kept since the reset")
    }

    @Test("At the limit with none expired, all go; renewing a known key drops nothing")
    func limitDropsAll() {
        let collapser = Collapser()
        for n in 0..<Collapser.uncacheableLimit { collapser.rememberUncacheable("k\(n)", until: 1000, now: 0) }
        collapser.rememberUncacheable("k0", until: 2000, now: 0)
        #expect(collapser.isUncacheable("k1", now: 0))
        #expect(collapser.isUncacheable("k0", now: 1500), "renewed")
        collapser.rememberUncacheable("new", until: 1000, now: 0)
        #expect(collapser.isUncacheable("new", now: 0))
        #expect(!collapser.isUncacheable("k1", now: 0))
    }

    @Test("An adopted leader is kept alive, once per object, until disowned")
    func orphans() {
        let collapser = Collapser()
        weak var weakOrphan: Waiter?
        do {
            let orphan = Waiter()
            weakOrphan = orphan
            collapser.adopt(orphan)
            collapser.adopt(orphan)
        }
        #expect(collapser.orphanCount == 1)
        #expect(weakOrphan != nil, "held by the collapser alone")
        if let orphan = weakOrphan { collapser.disown(orphan) }
        #expect(collapser.orphanCount == 0)
        #expect(weakOrphan == nil)
    }
}
