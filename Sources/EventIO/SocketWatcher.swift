import CEvent

/// Readiness events for a descriptor owned by someone else (curl's sockets).
/// - SeeAlso: `event_assign(3)`, `curl_multi_socket_action(3)`.
public final class SocketWatcher {
    /// What to wait for.
    public struct Interest: OptionSet, Sendable {
        public let rawValue: Int16
        public init(rawValue: Int16) { self.rawValue = rawValue }
        public static let read = Interest(rawValue: Int16(EV_READ))
        public static let write = Interest(rawValue: Int16(EV_WRITE))
    }

    private let loop: EventLoop
    private let fd: Int32
    private var event: OpaquePointer?
    private let handler: (Int32, Interest) -> Void

    /// Creates an idle watcher for `fd`; ``watch(_:)`` arms it.
    public init(loop: EventLoop, fd: Int32, handler: @escaping (Int32, Interest) -> Void) {
        self.loop = loop
        self.fd = fd
        self.handler = handler
    }

    deinit { if let event { event_free(event) } }

    /// Waits persistently for `interest` (replacing what was watched before). The event is
    /// allocated once and re-assigned on later changes (libcurl changes interest on every request).
    public func watch(_ interest: Interest) {
        let callback: event_callback_fn = { fd, what, ctx in
            let watcher = Unmanaged<SocketWatcher>.fromOpaque(ctx!).takeUnretainedValue()
            watcher.handler(fd, Interest(rawValue: what & Int16(EV_READ | EV_WRITE)))
        }
        let flags = interest.rawValue | Int16(EV_PERSIST)
        let context = Unmanaged.passUnretained(self).toOpaque()
        if let event {
            event_del(event)
            event_assign(event, loop.base, fd, flags, callback, context)
        } else {
            event = event_new(loop.base, fd, flags, callback, context)
        }
        event_add(event, nil)
    }

    /// Stops watching.
    public func cancel() {
        if let event {
            event_del(event)
            event_free(event)
        }
        event = nil
    }
}
