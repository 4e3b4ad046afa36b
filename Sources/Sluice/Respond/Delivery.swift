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
    func release(_ bytes: [UInt8]) { bytes.withUnsafeBytes { _ = chain.body($0, .release, from: index) } }
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
/// bytes of body, nor more than the held-bodies budget allows: past either the stage gives up,
/// and what was held goes on as it came (written once here for every holding stage).
struct HeldResponse {
    let head: ResponseHead
    let limit: Int
    private(set) var bytes: [UInt8] = []
    /// The budget's part for these bytes (none: not counted).
    let share: HeldBodyShare
    /// The last append was refused by the budget, not by `limit`.
    private(set) var overBudget = false

    init(_ head: ResponseHead, limit: Int, budget: HeldBodyBudget? = nil) {
        self.head = head
        self.limit = limit
        share = HeldBodyShare(budget)
    }

    /// Adds body bytes; `false` once the body would pass the limit or the budget (nothing added then).
    mutating func append(_ piece: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count + piece.count <= limit else { return false }
        guard share.take(piece.count) else {
            overBudget = true
            return false
        }
        if bytes.isEmpty {
            // The announced length when there is one (no regrowth copies), else 16 KiB to start.
            let announced = head.headers[.contentLength].flatMap { Int($0) } ?? 0
            bytes.reserveCapacity(min(limit, max(piece.count, announced, 16 * 1024)))
        }
        bytes.append(contentsOf: piece)
        return true
    }

    /// Why the stage gave up holding.
    func gaveUp(_ total: Int) -> String {
        overBudget ? HeldBodyBudget.overBudget(total) : JSONBodyDelivery.tooLarge(limit)
    }

    /// Gives up holding: the head and what was held go on (as ``HeldRelease`` offers them),
    /// then `piece`, which did not fit; `false`: `piece` was not taken (offer it again after the
    /// client drained, once the release has gone on).
    func overflow(
        with piece: UnsafeRawBufferPointer, _ push: DeliveryPush, to next: DeliveryNext<ResponseHead>,
        releasing: inout HeldRelease<ResponseHead>?
    ) -> Bool {
        next.head(head)
        var release = HeldRelease(bytes, share: share, next: next, then: nil)
        guard release.offer() else {
            releasing = release
            return false
        }
        return next.body(piece, push)
    }

    /// The head and body as held, passed on whole (offered as a source offers), then the end.
    func pass(to next: DeliveryNext<ResponseHead>, releasing: inout HeldRelease<ResponseHead>?) {
        next.head(head)
        HeldRelease.start(bytes, share: share, next: next, releasing: &releasing)
    }
}

/// A body a holding stage lets go, offered a piece at a time as a source offers: a client that
/// does not read leaves it here, counted in the held-bodies budget, not in its socket's buffer
/// beyond ``ResponseOutput/highWater``. The stage goes on with it when the client drained
/// (``DeliveryStage/drained()``), then ends the body when it was asked to.
struct HeldRelease<Head> {
    static var piece: Int { 64 * 1024 }
    private let bytes: [UInt8]
    private var offset = 0
    private let share: HeldBodyShare?
    let next: DeliveryNext<Head>
    /// The body ends after these bytes (`nil`: more comes from the source).
    private var ending: Bool?

    init(_ bytes: [UInt8], share: HeldBodyShare?, next: DeliveryNext<Head>, then ending: Bool?) {
        self.bytes = bytes
        self.share = share
        self.next = next
        self.ending = ending
    }

    /// Offers the bytes, then ends the body; what a refusal leaves is kept in `releasing`.
    static func start(
        _ bytes: [UInt8], share: HeldBodyShare?, next: DeliveryNext<Head>, releasing: inout HeldRelease<Head>?
    ) {
        var release = HeldRelease(bytes, share: share, next: next, then: true)
        releasing = release.offer() ? nil : release
    }

    /// The source's end came while these bytes were still going: it follows them.
    mutating func endWhenDone() { ending = true }

    /// A stage's ``DeliveryStage/drained()``: what `releasing` still holds goes on; `true` once
    /// nothing is left (its end, when it followed, has gone too: the exchange looks whether the
    /// response is complete).
    static func goOn(_ releasing: inout HeldRelease?) -> Bool {
        guard var release = releasing else { return true }
        guard release.offer() else {
            releasing = release
            return false
        }
        releasing = nil
        return true
    }

    /// Before a stage passes on a piece: what `releasing` still holds goes first. An offer waits
    /// for it (`false`: refused, offer it again after the client drained); a piece that must be
    /// taken (a release, the last before a cut) sends it now whatever the client's pace.
    static func before(_ push: DeliveryPush, _ releasing: inout HeldRelease?) -> Bool {
        guard push != .offer, let release = releasing else { return goOn(&releasing) }
        release.bytes.withUnsafeBytes {
            _ = release.next.body(UnsafeRawBufferPointer(rebasing: $0[release.offset...]), .release)
        }
        releasing = nil
        return true
    }

    /// A stage's end: after what `releasing` still holds, when it holds some (`true`: the end
    /// waits for it).
    static func endAfter(_ releasing: inout HeldRelease?) -> Bool {
        guard var release = releasing else { return false }
        release.endWhenDone()
        releasing = release
        return true
    }

    /// Offers what is left; `true` once all of it went (and the end, when it follows).
    mutating func offer() -> Bool {
        while offset < bytes.count {
            let end = min(bytes.count, offset + Self.piece)
            let taken = bytes.withUnsafeBytes {
                next.body(UnsafeRawBufferPointer(rebasing: $0[offset..<end]), .offer)
            }
            guard taken else { return false }
            offset = end
        }
        if ending == true { next.end() }
        return true
    }
}
