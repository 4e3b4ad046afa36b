import CEvent

#if canImport(Glibc)
    import Glibc
#endif

/// Delivers a POSIX signal to the loop thread.
/// - SeeAlso: `evsignal_new(3)` (a macro over `event_new` with `EV_SIGNAL`).
public final class SignalWatcher {
    /// Signals a server cares about.
    public enum Signal: Int32, Sendable {
        case interrupt = 2  // SIGINT
        case hangup = 1  // SIGHUP
        case terminate = 15  // SIGTERM
    }

    private var event: OpaquePointer!
    private let handler: () -> Void

    /// Starts watching `signal`; `handler` runs on the loop thread each time it arrives.
    public init(loop: EventLoop, signal: Signal, handler: @escaping () -> Void) {
        self.handler = handler
        event = event_new(
            loop.base, signal.rawValue, Int16(EV_SIGNAL | EV_PERSIST),
            { _, _, ctx in Unmanaged<SignalWatcher>.fromOpaque(ctx!).takeUnretainedValue().handler() },
            Unmanaged.passUnretained(self).toOpaque())
        event_add(event, nil)
        // A parent may have started us with the signal blocked (threads spawned from libdispatch
        // workers do): unblock it on this thread so it reaches the loop.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal.rawValue)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    deinit {
        event_del(event)
        event_free(event)
    }
}
