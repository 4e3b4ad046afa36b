import CEvent
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One libevent `event_base` and the thread that runs it.
///
/// `@unchecked Sendable` because a loop is created on one thread and run on another (tests,
/// the CLI); its state is touched only by the loop thread, and the cross-thread entry points
/// (``execute(_:)``, ``stopFromAnyThread()``) go through a mutex and an eventfd.
///
/// Everything created from a loop (listeners, connections, timers, watchers) belongs to the
/// thread that calls ``run()``; only ``execute(_:)`` and ``stopFromAnyThread()`` may be called
/// from other threads.
/// - SeeAlso: `event_base_new(3)`, `event_base_dispatch(3)`.
public final class EventLoop: @unchecked Sendable {
    let base: OpaquePointer

    private let wakeFD: Int32
    private var wakeEvent: OpaquePointer?
    private let pending = Mutex<[@Sendable () -> Void]>([])
    /// Activated when a connection first holds a write in a turn: runs after the turn's other
    /// events and sends what they held (``Connection/hold(_:)``).
    var turnEndEvent: OpaquePointer?
    /// The connections with held writes, in the order they first held one this turn.
    var heldConnections: [Connection] = []
    /// Bytes all connections hold.
    var heldBytes = 0
    /// Whether ``turnEndEvent`` is active (it runs after the turn's other events).
    var turnEndDue = false
    /// The connections whose writes with `more` may have left a partial segment in the kernel.
    var pushConnections: [Connection] = []
    /// What asked to hear of this turn's end (``atTurnEnd(_:)``), in order.
    var turnEndObservers: [any TurnEndObserver] = []

    /// Process-wide allocator tuning for a server (call once, before the loop runs): freed heap
    /// memory up to `trimThreshold` bytes stays for reuse instead of going back to the kernel, and
    /// only allocations of `mapThreshold` bytes or more are mapped on their own. glibc's defaults
    /// (128 KiB each, then adaptive) make every response's body buffer fault its pages in again.
    /// - SeeAlso: `mallopt(3)` (`M_TRIM_THRESHOLD`, `M_MMAP_THRESHOLD`).
    public static func keepFreedMemory(trimThreshold: Int, mapThreshold: Int) {
        mallopt(M_TRIM_THRESHOLD, Int32(clamping: trimThreshold))
        mallopt(M_MMAP_THRESHOLD, Int32(clamping: mapThreshold))
    }

    /// Runs `attach` with this loop's `event_base`, for another C library's libevent adapter
    /// (hiredis' `redisLibeventAttach`) to put its events on this loop. Only the Swift faces of C
    /// libraries see it (`@_spi(LibeventAdapter) import EventIO`); the pointer must not outlive
    /// the loop.
    @_spi(LibeventAdapter)
    public func attach<Result>(_ attach: (_ eventBase: OpaquePointer) throws -> Result) rethrows -> Result {
        try attach(base)
    }

    /// Creates a loop with its own `event_base` and a wake-up descriptor for other threads.
    public init() throws(EventIOError) {
        // A peer that disconnects must not kill the process: writes report EPIPE instead. Nor
        // may a size-limited file (RLIMIT_FSIZE, a full quota): writes report EFBIG instead.
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)
        // Not EVENT_BASE_FLAG_PRECISE_TIMER: with epoll it adds a timerfd_settime to every loop
        // turn. Timers keep their own precise deadline instead (``Timer``).
        guard let base = event_base_new() else { throw EventIOError(operation: "event_base_new") }
        self.base = base
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeFD >= 0 else { throw EventIOError(operation: "eventfd") }
        wakeEvent = event_new(
            base, wakeFD, Int16(EV_READ | EV_PERSIST),
            { _, _, ctx in Unmanaged<EventLoop>.fromOpaque(ctx!).takeUnretainedValue().drainPending() },
            Unmanaged.passUnretained(self).toOpaque())
        event_add(wakeEvent, nil)
        turnEndEvent = event_new(
            base, -1, 0,
            { _, _, ctx in Unmanaged<EventLoop>.fromOpaque(ctx!).takeUnretainedValue().endTurn() },
            Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let wakeEvent { event_free(wakeEvent) }
        if let turnEndEvent { event_free(turnEndEvent) }
        close(wakeFD)
        event_base_free(base)
    }

    /// Runs the loop on the calling thread until ``stop()`` is called.
    public func run() {
        event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY)
        endTurn()
        drainPending()
        // Freed bufferevents close their sockets in deferred finalizers: let those run now,
        // or a stopped loop would hold the descriptors open.
        event_base_loop(base, EVLOOP_NONBLOCK)
        event_base_loop(base, EVLOOP_NONBLOCK)
    }

    /// Stops ``run()`` after the current callbacks; call from the loop thread.
    public func stop() { event_base_loopbreak(base) }

    /// Stops the loop from any thread.
    public func stopFromAnyThread() { execute { [unowned self] in self.stop() } }

    /// Runs `work` on the loop thread at its next turn; callable from any thread.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        pending.withLock { $0.append(work) }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Runs `work` on the loop thread at the next turn; call from the loop thread (no locking).
    /// - SeeAlso: `event_base_once(3)`.
    public func callSoon(_ work: @escaping () -> Void) {
        let box = Unmanaged.passRetained(Deferred(work)).toOpaque()
        var zero = timeval(tv_sec: 0, tv_usec: 0)
        event_base_once(
            base, -1, Int16(EV_TIMEOUT),
            { _, _, ctx in Unmanaged<Deferred>.fromOpaque(ctx!).takeRetainedValue().work() }, box, &zero)
    }

    /// Whether other events wait to be handled in this loop turn (sockets that became ready
    /// with the one being handled, work queued for the turn): the loop is busy. The work done at
    /// the turn's end (``atTurnEnd(_:)``, held writes) does not count: it comes after the rest.
    public var othersReady: Bool {
        event_base_get_num_events(base, UInt32(EVENT_BASE_COUNT_ACTIVE)) > (turnEndDue ? 1 : 0)
    }

    /// Monotonic time in nanoseconds, cached per loop turn is not needed: one syscall-free read.
    public static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    private func drainPending() {
        var counter: UInt64 = 0
        _ = read(wakeFD, &counter, 8)
        let work = pending.withLock { queue -> [@Sendable () -> Void] in
            let taken = queue
            queue.removeAll()
            return taken
        }
        for item in work { item() }
    }
}

/// A closure carried through a C context pointer.
private final class Deferred {
    let work: () -> Void
    init(_ work: @escaping () -> Void) { self.work = work }
}

extension timeval {
    init(milliseconds: Int) {
        self.init(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
    }
}
