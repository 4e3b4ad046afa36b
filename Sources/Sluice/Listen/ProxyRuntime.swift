import Curl
import EventIO
import Foundation
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
    /// Raises the soft limit on open descriptors to the hard one, as Go's runtime does: the usual
    /// soft limit (1,024) is below what `limits.max_connections` allows once each client has
    /// its origin connection, a cache file and a log.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    public static func run(
        configuration: Configuration, logger: Logger, reload: (() throws -> Configuration)? = nil,
        onReady: (SocketAddress) -> Void = { _ in }
    ) throws {
        // Body buffers come and go with every response: keep freed memory rather than fault it in
        // again (9 % of the throughput of JSON stripping at c=64, measured).
        EventLoop.keepFreedMemory(trimThreshold: 8 << 20, mapThreshold: 1 << 20)
        raiseDescriptorLimit()
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
        let reloader = reload.map { HangupReload(loop: loop, server: server, logger: logger, read: $0) }
        signals.append(
            SignalWatcher(loop: loop, signal: .hangup) {
                guard let reloader else {
                    logger.notice("SIGHUP: running on built-in defaults; nothing to reload")
                    return
                }
                reloader.requested()
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
        // (Handed over; the command's end waits for the writes, once.)
        LogOutput.standardOutput.flush()
    }
}

/// SIGHUP's reload: the configuration is read and its contracts compiled on a thread of its own
/// (a large contract takes about a second), then applied on the loop, so traffic never waits for
/// it. A signal that arrives meanwhile asks for one more reload after it, of the file as it is
/// then. Loop-confined, but for `read`, which runs on the reload's thread (hence `@unchecked`).
final class HangupReload: @unchecked Sendable {
    /// Where a reload is.
    private enum Phase {
        case idle
        /// Reading on its thread; `again`: another SIGHUP came meanwhile.
        case reading(again: Bool)
    }

    private let loop: EventLoop
    private let server: ProxyServer
    private let logger: Logger
    private let read: () throws -> Configuration
    private var phase = Phase.idle

    init(loop: EventLoop, server: ProxyServer, logger: Logger, read: @escaping () throws -> Configuration) {
        (self.loop, self.server, self.logger, self.read) = (loop, server, logger, read)
    }

    /// A SIGHUP (on the loop).
    func requested() {
        switch phase {
        case .idle: start()
        case .reading: phase = .reading(again: true)
        }
    }

    private func start() {
        phase = .reading(again: false)
        let thread = Thread { [self] in
            let outcome = Result { try read() }
            loop.execute { [self] in
                apply(outcome)
                if case .reading(again: true) = phase { start() } else { phase = .idle }
            }
        }
        // As much stack as the main thread's usual 8 MiB and more: a contract that loaded at
        // start reads here too (a thread's default can be 2 MiB).
        thread.stackSize = 32 << 20
        thread.start()
    }

    private func apply(_ outcome: Result<Configuration, any Error>) {
        switch outcome {
        case .success(let fresh):
            let pending = server.reload(fresh)
            logger.notice("SIGHUP: reloaded \(fresh.rules.count) rule(s)")
            for (line, hasWarnings) in fresh.contractLines {
                if hasWarnings { logger.warning("\(line)") } else { logger.notice("\(line)") }
            }
            if !pending.isEmpty {
                logger.warning(
                    "SIGHUP: changes to \(pending.joined(separator: ", ")) need a restart; they were not applied")
            }
        case .failure(let error):
            logger.error("SIGHUP: reload failed, keeping the current rules: \(error)")
        }
    }
}
