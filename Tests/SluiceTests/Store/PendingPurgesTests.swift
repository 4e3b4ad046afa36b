import Testing

@testable import Sluice

@Suite("Purges kept while the shared tier is out")
struct PendingPurgesTests {
    @Test("Keys and hosts are kept; a glob or whole purge covers them; past the bound everything goes; take empties")
    func accumulation() {
        var pending = PendingPurges()
        #expect(pending.work == .none)
        pending.add(key: "http://a/1")
        pending.add(host: "A.example")
        pending.add(key: "http://a/1")
        #expect(pending.work == .some(keys: ["http://a/1"], hosts: ["a.example"]))
        pending.addEverything(.glob("http://a/*"))
        pending.add(key: "http://b/2")
        #expect(pending.work == .everything(.glob("http://a/*")))
        pending.addEverything(.glob("http://c/*"))
        #expect(pending.work == .everything(.all), "two globs: the replay cannot announce both, so all")
        #expect(pending.take() == .everything(.all))
        #expect(pending.work == .none)
        for index in 0...PendingPurges.keyLimit { pending.add(key: "http://a/\(index)") }
        #expect(pending.work == .everything(.all))
    }
}
