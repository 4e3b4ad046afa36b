import Curl
import EventIO
import Logging

/// Runs a ``ProxyServer`` on the calling thread until SIGINT/SIGTERM, then shuts down gracefully.
public enum ProxyRuntime {
    /// Binds, reports the bound address through `onReady`, and serves until a stop signal.
    /// - Parameters:
    ///   - configuration: what to serve.
    ///   - logger: where access and error lines go.
    ///   - onReady: called on the loop thread once the port is bound.
    public static func run(
        configuration: Configuration, logger: Logger, onReady: (SocketAddress) -> Void = { _ in }
    ) throws(EventIOError) {
        let loop = try EventLoop()
        let server = try ProxyServer(configuration: configuration, loop: loop, logger: logger)
        var signals: [SignalWatcher] = []
        for signal in [SignalWatcher.Signal.interrupt, .terminate] {
            signals.append(
                SignalWatcher(loop: loop, signal: signal) {
                    logger.notice(
                        "stopping: no new connections; waiting for \(server.openConnections) open connection(s)")
                    server.shutdown { loop.stop() }
                })
        }
        logger.notice("sluice listening on \(server.localAddress) (libcurl \(Curl.version))")
        onReady(server.localAddress)
        loop.run()
        withExtendedLifetime(signals) {}
        logger.notice("sluice stopped")
    }
}
