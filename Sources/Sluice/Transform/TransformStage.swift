import Codec

/// Delivery stage: a rule's JSON transforms (``JSONBodyDelivery``: its patch, then null
/// stripping). The body is held until it is complete, at most `limits.max_transform_body` of it:
/// past that what was held goes out untouched and the rest streams.
final class TransformStage: DeliveryStage {
    let transform: JSONTransform
    let limit: Int
    let coding: ContentCoding?
    /// Whether the paths stripping removed are wanted (someone watches the exchange).
    let listsPaths: Bool
    private var held: HeldResponse?

    init(_ transform: JSONTransform, limit: Int, coding: ContentCoding?, listsPaths: Bool) {
        self.transform = transform
        self.limit = limit
        self.coding = coding
        self.listsPaths = listsPaths
    }

    func head(_ head: ResponseHead, _ next: DeliveryNext<ResponseHead>) {
        held = HeldResponse(head, limit: limit)
    }

    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush, _ next: DeliveryNext<ResponseHead>) -> Bool {
        guard var kept = held.take() else { return next.body(bytes, push) }
        if kept.append(bytes) {
            held = kept
            return true
        }
        // Past max_transform_body: what was held goes out untouched, the rest streams.
        next.note(.untouched(JSONBodyDelivery.tooLarge(limit)))
        return kept.overflow(with: bytes, push, to: next)
    }

    func end(_ next: DeliveryNext<ResponseHead>) {
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
            next.release(body)
            next.end()
        case .untouched(let detail):
            if let detail { next.note(.untouched(detail)) }
            kept.pass(to: next)
        }
    }

    func abandon() { held = nil }
}
