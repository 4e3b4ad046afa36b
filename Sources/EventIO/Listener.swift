import CEvent

#if canImport(Glibc)
    import Glibc
#endif

/// A listening TCP socket (`evconnlistener`) that hands each accepted descriptor to a closure.
/// - SeeAlso: `evconnlistener_new_bind(3)`.
public final class Listener {
    private var listener: OpaquePointer?
    private let onAccept: (Int32, SocketAddress) -> Void
    /// The address actually bound (the real port when asked for port 0).
    public private(set) var localAddress: SocketAddress
    private var paused = false
    /// Accepting stopped for a moment after `accept(2)` failed for want of descriptors or memory.
    private var backingOff = false
    private var backoffTimer: Timer?
    /// Told of an `accept(2)` failure (its `errno`) once when such a run of failures begins.
    public var onAcceptFailure: ((Int32) -> Void)?
    /// How long accepting stops after `accept(2)` failed for want of descriptors or memory.
    public static let backoffMilliseconds = 100

    /// Binds and starts accepting.
    /// - Parameters:
    ///   - loop: the owning loop.
    ///   - address: where to listen; port 0 picks a free port.
    ///   - backlog: the `listen(2)` backlog; 1024 by default.
    ///   - onAccept: receives each new non-blocking descriptor and the peer's address; it owns the descriptor.
    public init(
        loop: EventLoop, address: SocketAddress, backlog: Int32 = 1024,
        onAccept: @escaping (Int32, SocketAddress) -> Void
    ) throws(EventIOError) {
        self.onAccept = onAccept
        localAddress = address
        let flags = UInt32(LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC)
        let context = Unmanaged.passUnretained(self).toOpaque()
        let created = address.withSockaddr { pointer, length in
            evconnlistener_new_bind(
                loop.base,
                { _, fd, address, length, ctx in
                    let listener = Unmanaged<Listener>.fromOpaque(ctx!).takeUnretainedValue()
                    listener.backingOff = false
                    let peer =
                        address.flatMap { SocketAddress(pointer: $0, length: Int(length)) }
                        ?? SocketAddress(ip: [0, 0, 0, 0], port: 0)
                    listener.onAccept(fd, peer)
                    listener.countAccept()
                }, context, flags, backlog, pointer, length)
        }
        guard let created else { throw EventIOError(operation: "evconnlistener_new_bind \(address)") }
        listener = created
        // Without this, a failed accept(2) is only a line on stderr from libevent, and with the
        // descriptors used up the socket stays readable: the loop would spin on it.
        evconnlistener_set_error_cb(created) { _, ctx in
            Unmanaged<Listener>.fromOpaque(ctx!).takeUnretainedValue().acceptFailed(errno)
        }
        backoffTimer = Timer(loop: loop) { [unowned self] in self.endBackoff() }
        turnTimer = Timer(loop: loop) { [unowned self] in self.nextTurn() }
        if let bound = SocketAddress.local(of: evconnlistener_get_fd(created)) { localAddress = bound }
    }

    deinit { if let listener { evconnlistener_free(listener) } }

    /// The most connections one readable event accepts: libevent's listener accepts until the
    /// backlog is empty, and clients that reconnect as fast as they are answered (a storm of
    /// refused ones) keep it from ever being empty, so nothing else on the loop ran (the refused
    /// connections' own closes, admitted clients, the admin port).
    public static let acceptsPerTurn = 64
    private var acceptedThisTurn = 0
    private var turnTimer: Timer?

    private func countAccept() {
        acceptedThisTurn += 1
        guard acceptedThisTurn >= Self.acceptsPerTurn, turnTimer?.isScheduled != true else { return }
        // Stops libevent's loop after this callback; accepting goes on in the next loop turn.
        evconnlistener_disable(listener)
        turnTimer?.schedule(milliseconds: 0)
    }

    private func nextTurn() {
        acceptedThisTurn = 0
        if !paused, backoffTimer?.isScheduled != true { evconnlistener_enable(listener) }
    }

    /// `accept(2)` failed. Out of descriptors or memory (the pending connection stays in the
    /// backlog, so the socket stays readable), accepting stops for ``backoffMilliseconds`` as
    /// nginx does, instead of spinning; the owner hears of it once per run of failures. Other
    /// errors (a connection reset before it was taken) are the peer's and pass.
    private func acceptFailed(_ code: Int32) {
        guard code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM else { return }
        if !backingOff {
            backingOff = true
            onAcceptFailure?(code)
        }
        if !paused { evconnlistener_disable(listener) }
        backoffTimer?.schedule(milliseconds: Self.backoffMilliseconds)
    }

    private func endBackoff() {
        // The run of failures ends with the next accept that works (``onAccept``); until then
        // each failure stops accepting again.
        if !paused { evconnlistener_enable(listener) }
    }

    /// Stops accepting (connections wait in the backlog) until ``resume()``.
    public func pause() {
        guard !paused else { return }
        paused = true
        evconnlistener_disable(listener)
    }

    /// Accepts again after ``pause()``.
    public func resume() {
        guard paused else { return }
        paused = false
        if backoffTimer?.isScheduled != true { evconnlistener_enable(listener) }
    }
}
