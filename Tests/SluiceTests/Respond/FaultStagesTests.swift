import EventIO
import Testing

@testable import Sluice

/// Injected faults as delivery stages: a reset after so many bytes, and a response paced to a rate.
@Suite("Fault stages: an injected reset and a shaped response")
struct FaultStagesTests {
    static func reset(after limit: Int64) -> (DeliveryChain<WireHead>, RecordingSink<WireHead>) {
        let sink = RecordingSink<WireHead>()
        return (DeliveryChain<WireHead>([ResetStage(after: limit, rule: "flaky")], sink: sink), sink)
    }

    static let injected = SluiceError.injected(rule: "flaky", status: 0, retryAfter: nil)

    @Test("A reset cuts at exactly its limit across pieces, says so, fails the connection and takes the rest")
    func resetCuts() {
        let (chain, sink) = Self.reset(after: 5)
        chain.head(.ok(length: 10))
        #expect(chain.send("abc"))
        #expect(chain.send("defg"), "the cut piece is taken")
        #expect(chain.send("hij"), "what follows the cut is taken and dropped")
        chain.end()
        #expect(
            sink.events == [
                "head", "body offer [abc]", "body beforeCut [de]", "fault: reset after 5 bytes", "fail",
            ])
        #expect(sink.body == Array("abcde".utf8))
        #expect(sink.pushes == [.offer, .beforeCut])
        #expect(sink.failures == [Self.injected])
        #expect(sink.ends == 0, "no end after a cut")
    }

    @Test("A piece that ends exactly at the limit is the cut piece, whole")
    func resetAtPieceBoundary() {
        let (chain, sink) = Self.reset(after: 5)
        chain.head(.ok(length: 10))
        #expect(chain.send("abc"))
        #expect(chain.send("de"))
        #expect(
            sink.events == ["head", "body offer [abc]", "body beforeCut [de]", "fault: reset after 5 bytes", "fail"])
    }

    @Test("A refused offer does not count toward the limit")
    func resetCountsTakenBytes() {
        let (chain, sink) = Self.reset(after: 4)
        chain.head(.ok(length: 10))
        sink.refusesOffers = true
        #expect(!chain.send("abc"))
        sink.refusesOffers = false
        #expect(chain.send("abc"))
        #expect(chain.send("xyz"))
        #expect(sink.body == Array("abcx".utf8))
        #expect(sink.events.suffix(2) == ["fault: reset after 4 bytes", "fail"])
    }

    @Test("Without a cut the end passes; a limit of 0 cuts at the first piece with nothing of it")
    func resetEdges() {
        let (whole, kept) = Self.reset(after: 100)
        whole.head(.ok(length: 3))
        #expect(whole.send("abc"))
        whole.end()
        #expect(kept.events == ["head", "body offer [abc]", "end"])

        let (chain, sink) = Self.reset(after: 0)
        chain.head(.ok(length: 3))
        #expect(chain.send("abc"))
        chain.end()
        #expect(sink.events == ["head", "body beforeCut []", "fault: reset after 0 bytes", "fail"])
        #expect(sink.pieces == [[]])
        #expect(sink.failures == [Self.injected])
    }

    @Test("Shaped at 50 000 B/s, 3000 bytes arrive whole and in order, no sooner than the rate allows, then the end")
    func shapeDelivers() throws {
        let loop = try EventLoop()
        let sink = RecordingSink<WireHead>()
        let started = EventLoop.monotonicNanoseconds()
        let stage = ShapeStage(loop: loop, bytesPerSecond: 50_000, stream: ExchangeDriverTests.MemoryStream())
        let chain = DeliveryChain<WireHead>([stage], sink: sink)
        var ended: UInt64 = 0
        sink.onEnd = {
            ended = EventLoop.monotonicNanoseconds()
            loop.stop()
        }
        let body = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        chain.head(.ok(length: 3000))
        #expect(chain.send(Array(body[..<1000])))
        #expect(chain.send(Array(body[1000...])))
        chain.end()
        #expect(sink.body.isEmpty && sink.ends == 0, "bytes and end wait for the slices")
        #expect(stage.queued == 3000)
        let giveUp = EventIO.Timer(loop: loop) { loop.stop() }
        giveUp.schedule(milliseconds: 5000)
        loop.run()
        giveUp.cancel()
        #expect(sink.body == body)
        #expect(sink.ends == 1)
        #expect(Set(sink.pushes) == [.release], "the shaper's slices are always taken")
        let passed = sink.events.filter { $0 != "progress" }
        #expect(passed.first == "head")
        #expect(passed.last == "end", "the end follows the last slice")
        #expect(passed.dropFirst().dropLast().allSatisfy { $0.hasPrefix("body release") })
        #expect(ended >= started + 55_000_000, "3000 bytes at 50 000 B/s take 60 ms from the stage's start")
        #expect(stage.queued == 0)
    }

    @Test("An offer is refused once the high-water mark is queued; a release is taken; a cut flushes the queue")
    func shapeHighWater() throws {
        let loop = try EventLoop()
        let sink = RecordingSink<WireHead>()
        let stage = ShapeStage(loop: loop, bytesPerSecond: 1000, stream: ExchangeDriverTests.MemoryStream())
        let chain = DeliveryChain<WireHead>([stage], sink: sink)
        chain.head(.ok(length: 1 << 20))
        let high = ResponseOutput.highWater
        #expect(chain.send([UInt8](repeating: 1, count: high - 1)))
        #expect(chain.send([2, 2]), "below the mark an offer is queued whole, even past it")
        #expect(stage.queued == high + 1)
        #expect(!chain.send([3]), "at the mark an offer is refused")
        #expect(stage.queued == high + 1)
        #expect(chain.send([4], .release))
        #expect(stage.queued == high + 2)
        #expect(sink.body.isEmpty, "nothing goes before a slice")
        #expect(chain.send([5], .beforeCut))
        #expect(stage.queued == 0, "before a cut, what waits goes at once")
        #expect(sink.pushes == [.release, .beforeCut])
        #expect(sink.body.count == high + 3)
        #expect(Array(sink.body.suffix(4)) == [2, 2, 4, 5])
        stage.abandon()
    }
}
