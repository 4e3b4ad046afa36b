import EventIO

/// A response sent at a set rate (a rule's `faults.bandwidth`): what the exchange writes waits here,
/// at most ``ResponseOutput/highWater`` of it (the source pauses above, as for a slow client), and
/// goes to the client in slices every ``tick`` milliseconds. Nothing holds a whole body.
final class Shaper {
    /// Milliseconds between slices.
    static let tick = 20

    let bytesPerSecond: Int
    private let stream: any ClientStream
    private var queue: [UInt8] = []
    private var start = 0
    private var timer: Timer?
    /// Called after each slice went out: the source may resume, or the response may be complete.
    var onProgress: (() -> Void)?
    /// How much may go now.
    private var pace: Pace

    init(loop: EventLoop, bytesPerSecond: Int, stream: any ClientStream) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        self.stream = stream
        pace = Pace(bytesPerSecond: bytesPerSecond, now: EventLoop.monotonicNanoseconds())
        timer = Timer(loop: loop) { [weak self] in self?.slice() }
    }

    deinit { timer?.cancel() }

    /// Bytes waiting.
    var queued: Int { queue.count - start }

    func append(_ pieces: [UnsafeRawBufferPointer]) {
        if stream.writeBroken { return }
        for piece in pieces where piece.count > 0 { queue.append(contentsOf: piece) }
        if queued > 0, timer?.isScheduled == false { timer?.schedule(milliseconds: Shaper.tick) }
    }

    /// Drops what waits (the exchange ended without it).
    func cancel() {
        timer?.cancel()
        queue = []
        start = 0
    }

    private func slice() {
        guard queued > 0 else { return }
        if stream.writeBroken { return cancel() }
        let allowed = pace.allowance(now: EventLoop.monotonicNanoseconds())
        // The client's own buffer full: wait for it as well (the socket is slower than the rate).
        if stream.outputCount < ResponseOutput.highWater, allowed > 0 {
            let count = min(queued, allowed)
            pace.spend(count)
            queue.withUnsafeBytes {
                stream.write(UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)]), more: false)
            }
            start += count
            if start == queue.count {
                queue.removeAll(keepingCapacity: true)
                start = 0
            } else if start >= 64 * 1024 {
                queue.removeFirst(start)
                start = 0
            }
        }
        if queued > 0 { timer?.schedule(milliseconds: Shaper.tick) }
        onProgress?()
    }
}

/// How many bytes a `faults.bandwidth` rate lets go now, for the response (``Shaper``) and the
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
    var wait: Int { Shaper.tick }
}
