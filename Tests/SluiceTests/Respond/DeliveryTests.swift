import Testing

@testable import Sluice

/// The end of a delivery chain for tests: keeps what reached it, in order (``events`` reads as a
/// transcript: `head`, `body offer [abc]`, `mark: …`, `end`, `fail`). Told to, it refuses offers.
final class RecordingSink<Head>: DeliverySink {
    var heads: [Head] = []
    /// The body bytes taken, concatenated.
    var body: [UInt8] = []
    /// Each piece taken and how it was pushed.
    var pieces: [[UInt8]] = []
    var pushes: [DeliveryPush] = []
    var ends = 0
    var failures: [SluiceError] = []
    var notes: [DeliveryNote] = []
    /// Everything that reached the sink, in order, as text.
    var events: [String] = []
    /// Offers refused (not recorded as taken).
    var refused = 0
    /// Refuse every `.offer` (a client whose buffer is full); other pushes are still taken.
    var refusesOffers = false
    /// Called at the end (a test running a loop stops it here).
    var onEnd: (() -> Void)?

    func head(_ head: Head) {
        heads.append(head)
        events.append("head")
    }

    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush) -> Bool {
        if refusesOffers, push == .offer {
            refused += 1
            return false
        }
        let piece = [UInt8](bytes)
        body += piece
        pieces.append(piece)
        pushes.append(push)
        // Short pieces as text, long ones (a shaper's slices) by their size.
        let shown = piece.count <= 64 ? String(decoding: piece, as: UTF8.self) : "\(piece.count) bytes"
        events.append("body \(push) [\(shown)]")
        return true
    }

    func end() {
        ends += 1
        events.append("end")
        onEnd?()
    }

    func fail(_ failure: SluiceError) {
        failures.append(failure)
        events.append("fail")
    }

    func note(_ note: DeliveryNote) {
        notes.append(note)
        events.append(Self.describe(note))
    }

    static func describe(_ note: DeliveryNote) -> String {
        switch note {
        case .mark(let value): "mark: \(value)"
        case .verdict(let outcome, _): "verdict: \(ContractRun.stored(outcome))"
        case .rejected(let head, let body): "rejected: \(head.status), \(body.count) bytes"
        case .cut(let head, let rest): "cut: \(head.status), \(rest.count) bytes withheld"
        case .transformed(summary: let summary, stripped: let stripped, paths: let paths):
            "transformed: \(summary); stripped=\(stripped); paths=\(paths.joined(separator: " "))"
        case .untouched(let why): "untouched: \(why)"
        case .fault(let what): "fault: \(what)"
        case .breakpoint(let what): "breakpoint: \(what)"
        case .pausedFor: "paused"
        case .breakpointReceived(let original): "breakpoint received: \(original.status ?? 0)"
        case .breakpointSent(let head, let body): "breakpoint sent: \(head.status), \(body.count) bytes"
        case .progress: "progress"
        }
    }
}

extension DeliveryChain {
    /// Sends bytes into the chain from its first stage.
    @discardableResult
    func send(_ bytes: [UInt8], _ push: DeliveryPush = .offer) -> Bool {
        bytes.withUnsafeBytes { self.body($0, push, from: 0) }
    }

    @discardableResult
    func send(_ text: String, _ push: DeliveryPush = .offer) -> Bool { send(Array(text.utf8), push) }
}

extension WireHead {
    /// A `200` head as written, with `Content-Length` framing of `length`.
    static func ok(length: Int64) -> WireHead {
        WireHead(
            form: .bytes(Array("HTTP/1.1 200 OK\r\nContent-Length: \(length)\r\n\r\n".utf8)), framing: .length,
            status: 200,
            bodyLength: length)
    }
}

/// A stage that says what it saw (as a mark) and passes everything on.
final class TaggingStage<Head>: DeliveryStage {
    let tag: String
    init(_ tag: String) { self.tag = tag }

    func head(_ head: Head, _ next: DeliveryNext<Head>) {
        next.note(.mark("\(tag) head"))
        next.head(head)
    }

    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush, _ next: DeliveryNext<Head>) -> Bool {
        next.note(.mark("\(tag) body \(bytes.count)"))
        return next.body(bytes, push)
    }

    func end(_ next: DeliveryNext<Head>) {
        next.note(.mark("\(tag) end"))
        next.end()
    }

    func abandon() {}
}

/// A stage that swallows everything.
final class SwallowingStage<Head>: DeliveryStage {
    func head(_ head: Head, _ next: DeliveryNext<Head>) {}
    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush, _ next: DeliveryNext<Head>) -> Bool { true }
    func end(_ next: DeliveryNext<Head>) {}
    func abandon() {}
}

@Suite("Delivery: a chain of stages between the source and the sink")
struct DeliveryTests {
    static let head = ResponseHead(status: 200, headers: HTTPFields([("Content-Type", "application/json")]))

    @Test("A chain without stages hands the head, the body and the end straight to the sink")
    func emptyChain() {
        let sink = RecordingSink<ResponseHead>()
        let chain = DeliveryChain<ResponseHead>([], sink: sink)
        chain.head(Self.head)
        #expect(chain.send("hello"))
        #expect(chain.send(" world", .release))
        chain.end()
        #expect(sink.heads == [Self.head])
        #expect(sink.body == Array("hello world".utf8))
        #expect(sink.pushes == [.offer, .release])
        #expect(sink.ends == 1)
        #expect(sink.events == ["head", "body offer [hello]", "body release [ world]", "end"])
    }

    @Test("Pass-through stages see each call in chain order before the sink; a refused offer comes back")
    func order() {
        let sink = RecordingSink<ResponseHead>()
        let chain = DeliveryChain<ResponseHead>(
            [TaggingStage<ResponseHead>("a"), TaggingStage<ResponseHead>("b")], sink: sink)
        chain.head(Self.head)
        #expect(chain.send("xyz"))
        sink.refusesOffers = true
        #expect(!chain.send("no"), "the sink's refusal reaches the source")
        #expect(chain.send("ok", .release), "a release is taken all the same")
        chain.end()
        #expect(
            sink.events == [
                "mark: a head", "mark: b head", "head",
                "mark: a body 3", "mark: b body 3", "body offer [xyz]",
                "mark: a body 2", "mark: b body 2",
                "mark: a body 2", "mark: b body 2", "body release [ok]",
                "mark: a end", "mark: b end", "end",
            ])
        #expect(sink.refused == 1)
        #expect(sink.body == Array("xyzok".utf8))
    }

    @Test("HeldResponse.append takes bytes up to the limit exactly and refuses a piece past it, adding nothing")
    func heldAppend() {
        var held = HeldResponse(Self.head, limit: 8)
        let accepted = ["12345", "6789", "678", "9"].map { text in
            Array(text.utf8).withUnsafeBytes { held.append($0) }
        }
        #expect(accepted == [true, false, true, false], "5 fits; 5 + 4 > 8; 5 + 3 == 8 fits; 9 > 8")
        #expect(held.bytes == Array("12345678".utf8), "a refused piece adds nothing")
        #expect(held.head == Self.head && held.limit == 8)
    }

    @Test(
        "HeldResponse.overflow passes the head, then offers the held bytes: a refusing client keeps them in the release, and the piece waits behind them"
    )
    func heldOverflow() {
        let sink = RecordingSink<ResponseHead>()
        sink.refusesOffers = true
        let chain = DeliveryChain<ResponseHead>([], sink: sink)
        var held = HeldResponse(Self.head, limit: 4)
        let appended = Array("abc".utf8).withUnsafeBytes { held.append($0) }
        #expect(appended)
        let releasing = ReleaseSlot<ResponseHead>()
        let taken = Array("defg".utf8).withUnsafeBytes {
            held.overflow(with: $0, .offer, to: DeliveryNext(chain: chain, index: 0), releasing: releasing)
        }
        #expect(!taken, "the piece is offered again after the held bytes went")
        #expect(sink.heads == [Self.head] && sink.events == ["head"] && sink.refused == 1)
        // The piece again, the client still full: refused, nothing overtakes the held bytes.
        #expect(!releasing.before(.offer))
        // The client drained: the held bytes go, then the piece.
        sink.refusesOffers = false
        #expect(releasing.goOn() && !releasing.endAfter())
        #expect(Array("defg".utf8).withUnsafeBytes { DeliveryNext(chain: chain, index: 0).body($0, .offer) })
        #expect(sink.events == ["head", "body offer [abc]", "body offer [defg]"])
        #expect(sink.ends == 0, "the body goes on: no end yet")

        // A push that must be taken sends what is left first, whatever the client's pace.
        let cut = RecordingSink<ResponseHead>()
        cut.refusesOffers = true
        let cutChain = DeliveryChain<ResponseHead>([], sink: cut)
        var cutHeld = HeldResponse(Self.head, limit: 4)
        _ = Array("abc".utf8).withUnsafeBytes { cutHeld.append($0) }
        let pending = ReleaseSlot<ResponseHead>()
        _ = Array("z".utf8).withUnsafeBytes {
            cutHeld.overflow(with: $0, .offer, to: DeliveryNext(chain: cutChain, index: 0), releasing: pending)
        }
        #expect(pending.before(.beforeCut) && !pending.endAfter())
        _ = Array("z".utf8).withUnsafeBytes { DeliveryNext(chain: cutChain, index: 0).body($0, .beforeCut) }
        #expect(cut.pushes == [.release, .beforeCut], "\(cut.events)")
        // An overflow on a piece that must be taken: the held bytes and the piece go now.
        let now = RecordingSink<ResponseHead>()
        now.refusesOffers = true
        let nowChain = DeliveryChain<ResponseHead>([], sink: now)
        let forced = Array("z".utf8).withUnsafeBytes {
            cutHeld.overflow(with: $0, .beforeCut, to: DeliveryNext(chain: nowChain, index: 0), releasing: pending)
        }
        #expect(forced && now.pushes == [.release, .beforeCut])
    }

    @Test("HeldResponse.pass passes the head and offers the held bytes; the end follows them, after a drain if it must")
    func heldPass() {
        let sink = RecordingSink<ResponseHead>()
        let chain = DeliveryChain<ResponseHead>([], sink: sink)
        var held = HeldResponse(Self.head, limit: 100)
        let appended = ["{\"a\":", "1}"].map { text in Array(text.utf8).withUnsafeBytes { held.append($0) } }
        #expect(appended == [true, true])
        let releasing = ReleaseSlot<ResponseHead>()
        held.pass(to: DeliveryNext(chain: chain, index: 0), releasing: releasing)
        #expect(!releasing.endAfter(), "nothing waits")
        #expect(sink.heads == [Self.head])
        #expect(sink.events == ["head", "body offer [{\"a\":1}]", "end"])

        let slow = RecordingSink<ResponseHead>()
        slow.refusesOffers = true
        let slowChain = DeliveryChain<ResponseHead>([], sink: slow)
        held.pass(to: DeliveryNext(chain: slowChain, index: 0), releasing: releasing)
        #expect(slow.events == ["head"] && slow.ends == 0)
        slow.refusesOffers = false
        #expect(releasing.goOn())
        #expect(slow.events == ["head", "body offer [{\"a\":1}]", "end"])
        // Cancelled (the exchange ended): nothing more goes, and the next drain finds nothing.
        let gone = RecordingSink<ResponseHead>()
        gone.refusesOffers = true
        let goneChain = DeliveryChain<ResponseHead>([], sink: gone)
        held.pass(to: DeliveryNext(chain: goneChain, index: 0), releasing: releasing)
        releasing.cancel()
        gone.refusesOffers = false
        #expect(releasing.goOn() && gone.events == ["head"])
    }

    @Test("The held-bodies budget: shares take what fits, and give it back when the last holder lets go")
    func heldBodyBudget() {
        let budget = HeldBodyBudget(total: 10)
        var first: HeldResponse? = HeldResponse(Self.head, limit: 100, budget: budget)
        var second = HeldResponse(Self.head, limit: 100, budget: budget)
        #expect(Array("123456".utf8).withUnsafeBytes { first!.append($0) })
        #expect(!Array("12345".utf8).withUnsafeBytes { second.append($0) })
        #expect(second.overBudget && second.gaveUp(budget.total).contains("max_held_bodies"))
        #expect(Array("1234".utf8).withUnsafeBytes { second.append($0) } && budget.used == 10)
        first = nil
        #expect(budget.used == 4)
    }

    @Test("stage(_:) finds the first stage of a type, or nil")
    func findsStage() {
        let first = TaggingStage<WireHead>("a")
        let second = TaggingStage<WireHead>("b")
        let swallowing = SwallowingStage<WireHead>()
        let chain = DeliveryChain<WireHead>([swallowing, first, second], sink: RecordingSink<WireHead>())
        #expect(chain.stage(TaggingStage<WireHead>.self) === first)
        #expect(chain.stage(SwallowingStage<WireHead>.self) === swallowing)
        #expect(chain.stage(ResetStage.self) == nil)
        #expect(DeliveryChain<WireHead>([], sink: RecordingSink<WireHead>()).stage(ResetStage.self) == nil)
    }
}
