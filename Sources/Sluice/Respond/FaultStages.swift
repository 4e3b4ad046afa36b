import EventIO

/// Delivery stage: a response sent at a set rate (a rule's `faults.bandwidth`). Body bytes wait
/// here, at most ``ResponseOutput/highWater`` of them from the source (it is refused above, and
/// pauses as for a slow client), and go on in slices every ``tick`` milliseconds; the end follows
/// the last slice. Nothing holds a whole body.
final class ShapeStage: DeliveryStage {
    /// Milliseconds between slices.
    static let tick = 20

    let bytesPerSecond: Int
    private let stream: any ClientStream
    private var queue: [UInt8] = []
    private var start = 0
    private var timer: Timer?
    /// How much may go now.
    private var pace: Pace
    /// The rest of the chain (known from the head on).
    private var next: DeliveryNext<WireHead>?
    /// The end came; it follows the last slice.
    private var ending = false

    init(loop: EventLoop, bytesPerSecond: Int, stream: any ClientStream) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        self.stream = stream
        pace = Pace(bytesPerSecond: bytesPerSecond, now: EventLoop.monotonicNanoseconds())
        timer = Timer(loop: loop) { [weak self] in self?.slice() }
    }

    deinit { timer?.cancel() }

    /// Bytes waiting.
    var queued: Int { queue.count - start }

    func head(_ head: WireHead, _ next: DeliveryNext<WireHead>) {
        self.next = next
        next.head(head)
    }

    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush, _ next: DeliveryNext<WireHead>) -> Bool {
        self.next = next
        if stream.writeBroken { return true }
        switch push {
        case .offer:
            if queued >= ResponseOutput.highWater { return false }
        case .release:
            break
        case .beforeCut:
            // The connection is cut next: what waits goes now, whatever the rate.
            sendQueued(upTo: queued, push: .release)
            return next.body(bytes, .beforeCut)
        }
        queue.append(contentsOf: bytes)
        if queued > 0, timer?.isScheduled == false { timer?.schedule(milliseconds: ShapeStage.tick) }
        return true
    }

    func end(_ next: DeliveryNext<WireHead>) {
        guard queued > 0 else { return next.end() }
        self.next = next
        ending = true
    }

    /// Drops what waits (the exchange ended without it).
    func abandon() {
        timer?.cancel()
        queue = []
        start = 0
        ending = false
    }

    private func slice() {
        guard let next, queued > 0 else { return }
        if stream.writeBroken { return abandon() }
        let allowed = pace.allowance(now: EventLoop.monotonicNanoseconds())
        // The client's own buffer full: wait for it as well (the socket is slower than the rate).
        if stream.outputCount < ResponseOutput.highWater, allowed > 0 {
            let count = min(queued, allowed)
            pace.spend(count)
            sendQueued(upTo: count, push: .release)
        }
        if queued > 0 {
            timer?.schedule(milliseconds: ShapeStage.tick)
        } else if ending {
            ending = false
            next.end()
        }
        next.note(.progress)
    }

    private func sendQueued(upTo count: Int, push: DeliveryPush) {
        guard let next, count > 0 else { return }
        queue.withUnsafeBytes { _ = next.body(UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)]), push) }
        start += count
        if start == queue.count {
            queue.removeAll(keepingCapacity: true)
            start = 0
        } else if start >= 64 * 1024 {
            queue.removeFirst(start)
            start = 0
        }
    }
}

/// Delivery stage: an injected reset (a rule's `faults.reset`): the body is cut after `limit`
/// bytes, nothing of it held back, and the connection is reset.
final class ResetStage: DeliveryStage {
    let limit: Int64
    let rule: String
    private var sent: Int64 = 0
    private var cut = false

    init(after limit: Int64, rule: String) {
        self.limit = limit
        self.rule = rule
    }

    func head(_ head: WireHead, _ next: DeliveryNext<WireHead>) { next.head(head) }

    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush, _ next: DeliveryNext<WireHead>) -> Bool {
        if cut { return true }
        guard sent + Int64(bytes.count) >= limit else {
            let taken = next.body(bytes, push)
            if taken { sent += Int64(bytes.count) }
            return taken
        }
        // Up to the cut, then nothing more.
        cut = true
        let kept = Int(max(0, limit - sent))
        next.body(UnsafeRawBufferPointer(rebasing: bytes[bytes.startIndex..<(bytes.startIndex + kept)]), .beforeCut)
        sent += Int64(kept)
        next.note(.fault("reset after \(sent) bytes"))
        next.fail(.injected(rule: rule, status: 0, retryAfter: nil))
        return true
    }

    func end(_ next: DeliveryNext<WireHead>) { if !cut { next.end() } }

    func abandon() {}
}

/// How many bytes a `faults.bandwidth` rate lets go now, for the response (``ShapeStage``) and the
/// request body alike. Pure: every answer is a function of the rate, what was sent and `now`
/// (monotonic nanoseconds).
struct Pace: Equatable {
    let bytesPerSecond: Int
    private var credit: Double = 0
    private var last: UInt64

    init(bytesPerSecond: Int, now: UInt64) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        last = now
    }

    /// Bytes that may go now (credit accrues with time, at most a second's worth).
    mutating func allowance(now: UInt64) -> Int {
        let elapsed = Double(now &- last) / 1e9
        last = now
        credit = min(credit + elapsed * Double(bytesPerSecond), Double(bytesPerSecond))
        return Int(credit)
    }

    mutating func spend(_ count: Int) { credit -= Double(count) }

    /// Milliseconds until a slice's worth (a tick) may go.
    var wait: Int { ShapeStage.tick }
}
