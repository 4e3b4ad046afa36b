import Codec

/// Delivery stage: a rule's JSON transforms (``JSONBodyDelivery``: its patch, then null
/// stripping). The body is held until it is complete, at most `limits.max_transform_body` of it
/// and within `limits.max_held_bodies` for all: past either what was held goes out untouched and
/// the rest streams. What goes out after is offered as a source offers (``HeldRelease``).
final class TransformStage: DeliveryStage {
    let transform: JSONTransform
    let limit: Int
    let coding: ContentCoding?
    /// Whether the paths stripping removed are wanted (someone watches the exchange).
    let listsPaths: Bool
    let budget: HeldBodyBudget?
    private var held: HeldResponse?
    /// What went out after holding and was not taken yet.
    private let releasing = ReleaseSlot<ResponseHead>()

    init(
        _ transform: JSONTransform, limit: Int, coding: ContentCoding?, listsPaths: Bool,
        budget: HeldBodyBudget? = nil
    ) {
        self.transform = transform
        self.limit = limit
        self.coding = coding
        self.listsPaths = listsPaths
        self.budget = budget
    }

    func head(_ head: ResponseHead, _ next: DeliveryNext<ResponseHead>) {
        held = HeldResponse(head, limit: limit, budget: budget)
    }

    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush, _ next: DeliveryNext<ResponseHead>) -> Bool {
        if !releasing.before(push) { return false }
        guard var kept = held.take() else { return next.body(bytes, push) }
        if kept.append(bytes) {
            held = kept
            return true
        }
        // Past max_transform_body (or the budget): what was held goes out untouched, the rest streams.
        next.note(.untouched(kept.gaveUp(budget?.total ?? 0)))
        return kept.overflow(with: bytes, push, to: next, releasing: releasing)
    }

    func drained() -> Bool { releasing.goOn() }

    func end(_ next: DeliveryNext<ResponseHead>) {
        if releasing.endAfter() { return }
        guard let kept = held.take() else { return next.end() }
        let delivery = JSONBodyDelivery(transform: transform, limit: limit, head: kept.head, coding: coding)
        switch delivery.finish(kept.bytes) {
        case .transformed(let head, let body, let removed, let patched, let note):
            let paths = listsPaths && removed > 0 ? delivery.removedPaths(kept.bytes) : []
            next.note(
                .transformed(
                    summary: JSONBodyDelivery.summary(removed: removed, patched: patched, note: note),
                    stripped: removed > 0, paths: paths))
            next.head(head)
            releasing.start(body, share: kept.share, next: next, ending: true)
        case .untouched(let detail):
            if let detail { next.note(.untouched(detail)) }
            kept.pass(to: next, releasing: releasing)
        }
    }

    func abandon() {
        held = nil
        releasing.cancel()
    }
}
