#if canImport(Glibc)
    import Glibc
#endif

/// An ``EventLoop`` running on a thread of its own, for work that must not hold the main loop
/// (a recording's SQLite writes): hand it work with ``EventLoop/execute(_:)``; ``stop()`` runs
/// what was handed over before it, then joins the thread.
/// - SeeAlso: `pthread_create(3)`.
public final class LoopThread: @unchecked Sendable {
    public let loop: EventLoop
    private var thread = pthread_t()
    private var running = false

    private final class Start {
        let loop: EventLoop
        init(_ loop: EventLoop) { self.loop = loop }
    }

    public init() throws(EventIOError) {
        loop = try EventLoop()
        let start = Unmanaged.passRetained(Start(loop)).toOpaque()
        let result = pthread_create(
            &thread, nil,
            { context in
                let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
                start.loop.run()
                return nil
            }, start)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw EventIOError(operation: "pthread_create")
        }
        running = true
    }

    /// Runs the work handed over so far, stops the loop and waits for the thread; call once,
    /// from the thread that made it.
    public func stop() {
        guard running else { return }
        running = false
        loop.stopFromAnyThread()
        pthread_join(thread, nil)
    }

    deinit { stop() }
}
