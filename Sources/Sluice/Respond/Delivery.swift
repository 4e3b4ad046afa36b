/// Delivery: what happens to a response on its way to the client, as a chain of stages (Varnish's
/// delivery processors, mitmproxy's layers). Each stage sees the head, the body pieces and the end,
/// and passes them on, changed or not, through ``DeliveryNext``; the last one hands them to a
/// ``DeliverySink``. An exchange composes its chains from its rule and what watches it; one
/// without stages (the common case) writes straight to its ``ResponseOutput``.
///
/// Two chains meet at the client head: ``DeliveryStage``s of `ResponseHead` (contract check, JSON
/// transform) see the response as the origin or the cache gave it; those of ``WireHead`` (injected
/// reset, capture, shaping) see the client's head, as written, and the body before its framing.
protocol DeliveryStage<Head>: AnyObject {
    associatedtype Head
    /// The final head; passed on (changed or not) through `next`, or kept for later.
    func head(_ head: Head, _ next: DeliveryNext<Head>)
    /// A body piece. An ``DeliveryPush/offer`` may be refused (`false`: offer it again after the
    /// client drained); any other push must be taken.
    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush, _ next: DeliveryNext<Head>) -> Bool
    /// The body is complete.
    func end(_ next: DeliveryNext<Head>)
    /// The exchange ended without the rest (the client left, the store was given up).
    func abandon()
    /// The client drained: a stage releasing held bytes (``HeldRelease``) goes on; `false` while
    /// some are still left.
    func drained() -> Bool
}

extension DeliveryStage {
    func drained() -> Bool { true }
}

/// How a body piece is handed on.
enum DeliveryPush {
    /// From the source, which can wait: a stage or the client may refuse it.
    case offer
    /// Bytes a stage held and now releases: always taken.
    case release
    /// The last bytes before the response is cut: always taken, and nothing held back.
    case beforeCut
}

/// What a stage has to say about the exchange (its record, its head's marks, the counters).
enum DeliveryNote {
    /// A `Sluice-Validation` member for the client's head (said before the head is passed on).
    case mark(String)
    /// The contract's verdict on the body.
    case verdict(ContractRun.Outcome, ContractRun)
    /// The origin's response (head, and its body as held) that an enforced contract refused:
    /// what a recording keeps instead of the problem the client got.
    case rejected(ResponseHead, [UInt8])
    /// A stream an enforced contract cut: its head, and the bytes of it that did not go out (the
    /// piece in which an item broke); what went out before is the capture's own.
    case cut(ResponseHead, [UInt8])
    /// The JSON transform changed the body: its summary, and the stripped paths when asked for.
    case transformed(summary: String, stripped: Bool, paths: [String])
    /// The JSON transform left the body as it was, and why.
    case untouched(String)
    /// What an injected fault did.
    case fault(String)
    /// What a breakpoint did.
    case breakpoint(String)
    /// How long a breakpoint held the response, in seconds.
    case pausedFor(Double)
    /// The response as received, before a person edited or replaced it at a breakpoint.
    case breakpointReceived(PausedMessage)
    /// What goes out instead, as the person edited or wrote it (said before its head is passed
    /// on): the contract's verdict is on this one.
    case breakpointSent(ResponseHead, [UInt8])
    /// A stage let bytes go on its own time (a shaper's slice): the source may resume and the
    /// response may be complete.
    case progress
}

/// Where the last stage hands the response: the exchange, between the two chains and at the client.
protocol DeliverySink<Head>: AnyObject {
    associatedtype Head
    func head(_ head: Head)
    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush) -> Bool
    func end()
    /// A stage answers with a failure instead (before the head left) or cuts the connection (after).
    func fail(_ failure: SluiceError)
    func note(_ note: DeliveryNote)
}

/// A stage's view of the rest of the chain: the stages after it, then the sink.
struct DeliveryNext<Head> {
    unowned let chain: DeliveryChain<Head>
    let index: Int

    func head(_ head: Head) { chain.head(head, from: index) }
    @discardableResult
    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush = .offer) -> Bool {
        chain.body(bytes, push, from: index)
    }
    func end() { chain.end(from: index) }
    func fail(_ failure: SluiceError) { chain.sink.fail(failure) }
    func note(_ note: DeliveryNote) { chain.sink.note(note) }
}

/// The stages of one exchange for one kind of head, in order, and the sink after them.
final class DeliveryChain<Head> {
    private(set) var stages: [any DeliveryStage<Head>]
    let sink: any DeliverySink<Head>

    init(_ stages: [any DeliveryStage<Head>], sink: any DeliverySink<Head>) {
        self.stages = stages
        self.sink = sink
    }

    func head(_ head: Head, from index: Int = 0) {
        guard index < stages.count else { return sink.head(head) }
        stages[index].head(head, DeliveryNext(chain: self, index: index + 1))
    }

    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush = .offer, from index: Int = 0) -> Bool {
        guard index < stages.count else { return sink.body(bytes, push) }
        return stages[index].body(bytes, push, DeliveryNext(chain: self, index: index + 1))
    }

    func end(from index: Int = 0) {
        guard index < stages.count else { return sink.end() }
        stages[index].end(DeliveryNext(chain: self, index: index + 1))
    }

    func abandon() { for stage in stages { stage.abandon() } }

    /// The client drained: stages releasing held bytes go on, in order; `false` while one still
    /// has some left (the source waits for the next drain).
    func drained() -> Bool {
        for stage in stages where !stage.drained() { return false }
        return true
    }

    /// The first stage of a type.
    func stage<Stage>(_ type: Stage.Type) -> Stage? { stages.lazy.compactMap { $0 as? Stage }.first }
}

/// The client's head as it is written, with the body's framing: HTTP/1.1 bytes (status line and
/// fields), or, for a client that takes a response as parts (an HTTP/2 stream), the head itself.
struct WireHead {
    enum Form {
        case bytes([UInt8])
        case parts(ResponseHead)
    }

    var form: Form
    var framing: ResponseWriter.Framing
    var status: Int
    /// The announced length (`Content-Length` framing), else 0.
    var bodyLength: Int64

    /// The head as HTTP/1.1 bytes (made for a watcher when the client takes parts).
    var bytes: [UInt8] {
        switch form {
        case .bytes(let bytes): bytes
        case .parts(let head): ResponseWriter.head(head)
        }
    }
}

/// What all exchanges together hold of bodies whole (`limits.max_held_bodies`): a holding stage
/// takes its bytes from it as they come and gives them back when they have gone to the client
/// (or the exchange ended). Loop-confined.
final class HeldBodyBudget {
    var total: Int
    private(set) var used = 0

    init(total: Int) { self.total = total }

    /// Takes `count` bytes; `false` (nothing taken) when they do not fit.
    func take(_ count: Int) -> Bool {
        guard used + count <= total else { return false }
        used += count
        return true
    }

    func giveBack(_ count: Int) { used -= count }

    static func overBudget(_ total: Int) -> String {
        "the bodies held whole now pass limits.max_held_bodies (\(total) bytes)"
    }
}

/// One holding stage's part of the ``HeldBodyBudget``: given back when the last holder of it
/// (what is held, then what is being released) lets go.
final class HeldBodyShare {
    private let budget: HeldBodyBudget?
    private var count = 0

    init(_ budget: HeldBodyBudget?) { self.budget = budget }

    func take(_ bytes: Int) -> Bool {
        guard let budget else { return true }
        guard budget.take(bytes) else { return false }
        count += bytes
        return true
    }

    deinit { budget?.giveBack(count) }
}

/// A head and body held whole for a stage that decides at the end, never more than `limit`
/// bytes of body, nor more than the held-bodies budget allows (room reserved ahead counts): past
/// either the stage gives up, and what was held goes on as it came (written once here for every
/// holding stage).
struct HeldResponse {
    let head: ResponseHead
    let limit: Int
    private(set) var bytes: [UInt8] = []
    /// The budget's part for these bytes (none: not counted).
    let share: HeldBodyShare
    /// Bytes taken from the budget: those held, or the room reserved for them.
    private var counted = 0
    /// The last append was refused by the budget, not by `limit`.
    private(set) var overBudget = false

    init(_ head: ResponseHead, limit: Int, budget: HeldBodyBudget? = nil) {
        self.head = head
        self.limit = limit
        share = HeldBodyShare(budget)
    }

    /// Adds body bytes; `false` once the body would pass the limit or the budget (nothing added then).
    mutating func append(_ piece: UnsafeRawBufferPointer) -> Bool {
        let needed = bytes.count + piece.count
        guard needed <= limit else { return false }
        if bytes.isEmpty {
            // The announced length when there is one (no regrowth copies), else 16 KiB to start,
            // when the budget has room for it.
            let announced = head.headers[.contentLength].flatMap { Int($0) } ?? 0
            let room = min(limit, max(needed, announced, 16 * 1024))
            if share.take(room) {
                counted = room
                bytes.reserveCapacity(room)
            }
        }
        if needed > counted {
            guard share.take(needed - counted) else {
                overBudget = true
                return false
            }
            counted = needed
        }
        bytes.append(contentsOf: piece)
        return true
    }

    /// Why the stage gave up holding.
    func gaveUp(_ total: Int) -> String {
        overBudget ? HeldBodyBudget.overBudget(total) : JSONBodyDelivery.tooLarge(limit)
    }

    /// Gives up holding: the head and what was held go on (offered at the client's pace, kept in
    /// `releasing` meanwhile), then `piece`, which did not fit; `false`: `piece` was not taken
    /// (offer it again after the client drained). A piece that must be taken (a release, the last
    /// before a cut) takes the held bytes with it now, whatever the client's pace.
    func overflow(
        with piece: UnsafeRawBufferPointer, _ push: DeliveryPush, to next: DeliveryNext<ResponseHead>,
        releasing: ReleaseSlot<ResponseHead>
    ) -> Bool {
        next.head(head)
        guard push == .offer else {
            bytes.withUnsafeBytes { _ = next.body($0, .release) }
            return next.body(piece, push)
        }
        guard releasing.start(bytes, share: share, next: next, ending: false) else { return false }
        return next.body(piece, push)
    }

    /// The head and body as held, passed on whole (offered at the client's pace), then the end.
    func pass(to next: DeliveryNext<ResponseHead>, releasing: ReleaseSlot<ResponseHead>) {
        next.head(head)
        releasing.start(bytes, share: share, next: next, ending: true)
    }
}

/// A body a holding stage lets go, offered a piece at a time as a source offers: a client that
/// does not read leaves it here, counted in the held-bodies budget, not in its socket's buffer
/// beyond ``ResponseOutput/highWater``.
struct HeldRelease<Head> {
    static var piece: Int { 64 * 1024 }
    let bytes: [UInt8]
    var offset = 0
    let share: HeldBodyShare?
    let next: DeliveryNext<Head>
    /// The body ends after these bytes (`false`: more comes from the source).
    var ending: Bool

    /// Offers what is left until one is refused or `cancelled` says the stage let go; `true` once
    /// all of it went (and the end, when it follows).
    mutating func offer(cancelled: () -> Bool) -> Bool {
        while offset < bytes.count {
            if cancelled() { return true }
            let end = min(bytes.count, offset + Self.piece)
            let taken = bytes.withUnsafeBytes {
                next.body(UnsafeRawBufferPointer(rebasing: $0[offset..<end]), .offer)
            }
            guard taken else { return false }
            offset = end
        }
        if ending, !cancelled() { next.end() }
        return true
    }
}

/// Where a holding stage keeps what it let go and the client has not taken yet (one
/// ``HeldRelease`` at a time): the stage goes on with it when the client drained
/// (``DeliveryStage/drained()``), sends it before anything after it, and ends the body after it.
/// What a release does down the chain may end the exchange and the stage with it (an injected
/// reset, a failure): ``cancel()`` then stops it, and nothing of it is kept.
final class ReleaseSlot<Head> {
    private var current: HeldRelease<Head>?
    /// Counts cancellations: a release that saw it change while offering is dropped.
    private var generation = 0

    /// Offers `bytes` (then the end, when `ending`); `true` when all went, else the rest waits here.
    @discardableResult
    func start(_ bytes: [UInt8], share: HeldBodyShare?, next: DeliveryNext<Head>, ending: Bool) -> Bool {
        offer(HeldRelease(bytes: bytes, share: share, next: next, ending: ending))
    }

    /// The client drained: what waits goes on; `true` once nothing is left (its end, when it
    /// followed, has gone too: the exchange looks whether the response is complete).
    func goOn() -> Bool {
        guard let release = current else { return true }
        return offer(release)
    }

    /// Before a stage passes on a piece: what waits goes first. An offer waits for it (`false`:
    /// refused, offer it again after the client drained); a piece that must be taken (a release,
    /// the last before a cut) sends it now, whatever the client's pace.
    func before(_ push: DeliveryPush) -> Bool {
        guard push != .offer, let release = current else { return goOn() }
        current = nil
        release.bytes.withUnsafeBytes {
            _ = release.next.body(UnsafeRawBufferPointer(rebasing: $0[release.offset...]), .release)
        }
        return true
    }

    /// The source's end: after what waits, when something does (`true`: the end waits for it).
    func endAfter() -> Bool {
        guard current != nil else { return false }
        current?.ending = true
        return true
    }

    /// The stage let go (the exchange ended without the rest): nothing more is offered.
    func cancel() {
        current = nil
        generation += 1
    }

    private func offer(_ release: HeldRelease<Head>) -> Bool {
        var release = release
        current = nil
        let mark = generation
        let done = release.offer { self.generation != mark }
        if generation != mark { return true }
        if !done { current = release }
        return done
    }
}
