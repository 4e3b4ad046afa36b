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
                    let peer =
                        address.flatMap { SocketAddress(pointer: $0, length: Int(length)) }
                        ?? SocketAddress(ip: [0, 0, 0, 0], port: 0)
                    listener.onAccept(fd, peer)
                }, context, flags, backlog, pointer, length)
        }
        guard let created else { throw EventIOError(operation: "evconnlistener_new_bind \(address)") }
        listener = created
        if let bound = SocketAddress.local(of: evconnlistener_get_fd(created)) { localAddress = bound }
    }

    deinit { if let listener { evconnlistener_free(listener) } }

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
        evconnlistener_enable(listener)
    }
}
