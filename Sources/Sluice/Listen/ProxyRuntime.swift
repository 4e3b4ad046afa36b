import Curl
import EventIO
import Logging

/// Runs a ``ProxyServer`` on the calling thread until SIGINT/SIGTERM, then shuts down gracefully.
public enum ProxyRuntime {
    /// Binds, reports the bound address through `onReady`, and serves until a stop signal.
    /// SIGHUP calls `reload` and applies the new rules (a failing reload keeps the old ones).
    /// - Parameters:
    ///   - configuration: what to serve.
    ///   - logger: where access and error lines go.
    ///   - reload: reads the configuration again (the file it came from); `nil` ignores SIGHUP.
    ///   - onReady: called on the loop thread once the port is bound.
    public static func run(
        configuration: Configuration, logger: Logger, reload: (() throws -> Configuration)? = nil,
        onReady: (SocketAddress) -> Void = { _ in }
    ) throws {
        // Body buffers come and go with every response: keep freed memory rather than fault it in
        // again (9 % of the throughput of JSON stripping at c=64, measured).
        EventLoop.keepFreedMemory(trimThreshold: 8 << 20, mapThreshold: 1 << 20)
        let loop = try EventLoop()
        let server = try ProxyServer(configuration: configuration, loop: loop, logger: logger)
        // Every port must be had, or nothing starts (`ListenFailure`); `admin.listen: ""` is how
        // to run without the page.
        let admin =
            configuration.admin.listen.isEmpty
            ? nil
            : try AdminServer(proxy: server, listen: configuration.admin.listen, token: configuration.admin.token)
        var signals: [SignalWatcher] = []
        for signal in [SignalWatcher.Signal.interrupt, .terminate] {
            signals.append(
                SignalWatcher(loop: loop, signal: signal) {
                    logger.notice(
                        "stopping: no new connections; waiting for \(server.openConnections) open connection(s)")
                    admin?.close()
                    server.shutdown { loop.stop() }
                })
        }
        signals.append(
            SignalWatcher(loop: loop, signal: .hangup) {
                guard let reload else {
                    logger.notice("SIGHUP: running on built-in defaults; nothing to reload")
                    return
                }
                do {
                    let fresh = try reload()
                    let pending = server.reload(fresh)
                    logger.notice("SIGHUP: reloaded \(fresh.rules.count) rule(s)")
                    for (line, hasWarnings) in fresh.contractLines {
                        if hasWarnings { logger.warning("\(line)") } else { logger.notice("\(line)") }
                    }
                    if !pending.isEmpty {
                        logger.warning(
                            "SIGHUP: changes to \(pending.joined(separator: ", ")) need a restart; they were not applied"
                        )
                    }
                } catch {
                    logger.error("SIGHUP: reload failed, keeping the current rules: \(error)")
                }
            })
        let upstream =
            configuration.upstream.engine == .auto
            ? "upstream: Sluice's HTTP/1.1, libcurl \(Curl.version) for parents, HTTP/2-only origins and gRPC"
            : "upstream: libcurl \(Curl.version)"
        logger.notice("sluice listening on \(server.localAddress) (\(upstream))")
        if let admin {
            logger.notice(
                "admin page on http://\(admin.localAddress)/ (and the API: health, stats, metrics, cache, events)")
        }
        // Buffered log lines (`LogOutput`) are written at least every second, and at the stop.
        let logFlush = Timer(loop: loop, repeats: true) { LogOutput.standardOutput.flush() }
        logFlush.schedule(milliseconds: 1000)
        onReady(server.localAddress)
        loop.run()
        logFlush.cancel()
        withExtendedLifetime(signals) {}
        logger.notice("sluice stopped")
        LogOutput.standardOutput.flush()
    }
}
