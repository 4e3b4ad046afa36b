import Dispatch
import EventIO
import Logging

/// A proxy run beside other work in the same process (`sluice run`): its own loop thread, the
/// bound address known before ``init(configuration:logger:monitors:)`` returns, extra event
/// monitors, and a graceful stop from the thread that started it. No signal handling: the
/// process that embeds it decides what a signal means.
public final class EmbeddedProxy: @unchecked Sendable {
    /// Where it listens (an ephemeral port when `listen` says `:0`).
    public let address: SocketAddress
    /// Its port.
    public var port: UInt16 { address.port }
    private let thread: LoopThread
    /// Touched only on the loop thread.
    private let server: ProxyServer

    private final class Box<Value>: @unchecked Sendable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// Binds and starts serving on a new thread.
    /// - Parameters:
    ///   - configuration: what to serve (its `listen` may name port 0).
    ///   - logger: access and error lines.
    ///   - monitors: see every exchange, on the loop thread, after the access log.
    /// - Throws: what ``ProxyServer/init(configuration:loop:logger:hooks:)`` throws (a port
    ///   that cannot be bound, a local CA that cannot be used).
    public init(configuration: Configuration, logger: Logger, monitors: [any EventMonitor]) throws {
        let thread = try LoopThread()
        let made = Box<Result<ProxyServer, any Error>?>(nil)
        let handed = Box(monitors)
        let ready = DispatchSemaphore(value: 0)
        let loop = thread.loop
        // Everything of the server is made and used on its loop's thread.
        loop.execute {
            do {
                let server = try ProxyServer(configuration: configuration, loop: loop, logger: logger)
                for monitor in handed.value { server.session.eventMonitor.add(monitor) }
                made.value = .success(server)
            } catch {
                made.value = .failure(error)
            }
            ready.signal()
        }
        ready.wait()
        switch made.value! {
        case .success(let server):
            self.server = server
            self.thread = thread
            address = server.localAddress
        case .failure(let error):
            thread.stop()
            throw error
        }
        logger.notice("sluice listening on \(address)")
    }

    /// Stops accepting, lets open exchanges finish (at most `timeouts.shutdown_grace`), flushes
    /// what the proxy writes (cache, recording, log) and joins the thread. Call once.
    public func stop() {
        let done = DispatchSemaphore(value: 0)
        let server = Box(self.server)
        thread.loop.execute { server.value.shutdown { done.signal() } }
        done.wait()
        thread.stop()
        LogOutput.standardOutput.flush(waitingUpTo: 2)
    }
}
