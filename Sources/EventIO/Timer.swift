import CEvent

/// A one-shot or repeating timer on an ``EventLoop``.
/// - SeeAlso: `event_new(3)` with fd -1 (libevent's `evtimer_new` is a macro).
public final class Timer {
    private var event: OpaquePointer!
    private let handler: () -> Void
    /// When a one-shot timer is due, on the precise monotonic clock (0: not armed by a delay).
    private var deadline: UInt64 = 0
    /// Whether the timer is armed.
    public private(set) var isScheduled = false
    private let repeats: Bool

    /// Creates a disarmed timer.
    /// - Parameters:
    ///   - loop: the owning loop.
    ///   - repeats: fire every interval until cancelled; `false` by default.
    ///   - handler: runs on the loop thread when the timer fires.
    public init(loop: EventLoop, repeats: Bool = false, handler: @escaping () -> Void) {
        self.handler = handler
        self.repeats = repeats
        event = event_new(
            loop.base, -1, Int16(repeats ? EV_PERSIST : 0),
            { _, _, ctx in
                let timer = Unmanaged<Timer>.fromOpaque(ctx!).takeUnretainedValue()
                if !timer.repeats {
                    // libevent's clock may be CLOCK_MONOTONIC_COARSE (a tick behind): early by the
                    // precise clock, the rest is waited for.
                    let now = EventLoop.monotonicNanoseconds()
                    if timer.deadline > now {
                        var tv = timeval(milliseconds: Int((timer.deadline - now + 999_999) / 1_000_000))
                        event_add(timer.event, &tv)
                        return
                    }
                    timer.isScheduled = false
                }
                timer.handler()
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { event_free(event) }

    /// Arms (or re-arms) the timer to fire after `milliseconds`, counted from now and never less
    /// (a configured 400 ms latency once answered after 399.3 ms): libevent counts from the time
    /// it cached when the loop woke (a busy callback leaves it behind) on a clock that may be
    /// CLOCK_MONOTONIC_COARSE, so a one-shot timer keeps its own deadline on the precise clock
    /// and, fired early, waits the rest.
    public func schedule(milliseconds: Int) {
        let delay = max(0, milliseconds)
        var tv = timeval(milliseconds: delay)
        if !repeats { deadline = delay > 0 ? EventLoop.monotonicNanoseconds() + UInt64(delay) * 1_000_000 : 0 }
        event_add(event, &tv)
        isScheduled = true
    }

    /// Fires the timer in this loop turn, once the callbacks already due have run (no poll in
    /// between: `event_active(3)`); a pending deadline is replaced, and a later
    /// ``schedule(milliseconds:)`` replaces this in turn (`event_add` takes a timer off the active
    /// list); calling it again before it ran changes nothing. One-shot timers only.
    public func fireSoon() {
        precondition(!repeats, "fireSoon is for one-shot timers")
        deadline = 0
        event_active(event, EV_TIMEOUT, 1)
        isScheduled = true
    }

    /// Disarms the timer.
    public func cancel() {
        guard isScheduled else { return }
        event_del(event)
        isScheduled = false
    }
}
