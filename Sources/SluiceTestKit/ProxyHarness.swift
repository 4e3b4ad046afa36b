import EventIO
import Foundation
import Logging
import Sluice

/// Runs Sluice on its own thread, on 127.0.0.1 port 0, for a test; reports the real port.
public final class ProxyHarness: @unchecked Sendable {
    /// The proxy's port.
    public let port: UInt16
    private let loop: EventLoop
    private let box = ServerBox()
    private let finished = DispatchSemaphore(value: 0)
    /// Log lines written by the proxy.
    public let logLines = LogCapture()
    /// The cache file this harness created (removed when it goes away).
    private var ownedCacheFile: String?
    /// The upstream engine the proxy runs with (`SLUICE_TEST_UPSTREAM_ENGINE` may have chosen it).
    public let upstreamEngine: Configuration.UpstreamEngine

    /// Starts a proxy with `configuration` (its listen address is replaced by `listen`, 127.0.0.1:0
    /// unless a test needs another interface).
    /// - Parameter hooks: per-exchange hooks (tests of the session engine), none by default.
    public init(
        configuration: Configuration = Configuration(), listen: String = "127.0.0.1:0", hooks: UpstreamTask.Hooks? = nil
    ) throws {
        var chosen = configuration
        // SLUICE_TEST_UPSTREAM_ENGINE=curl runs a test family again with libcurl carrying what
        // the native transport would (scripts/test.sh does, for the core families).
        if chosen.upstream.engine == .auto,
            let name = ProcessInfo.processInfo.environment["SLUICE_TEST_UPSTREAM_ENGINE"],
            let engine = Configuration.UpstreamEngine(rawValue: name)
        {
            chosen.upstream.engine = engine
        }
        upstreamEngine = chosen.upstream.engine
        // Each proxy gets its own real SQLite file unless the test chose one.
        if chosen.cache.path == Configuration().cache.path {
            chosen.cache.path =
                TestScratch.root
                .appendingPathComponent("sluice-test-\(UUID().uuidString).sqlite").path
            ownedCacheFile = chosen.cache.path
        }
        let configuration = chosen
        let ready = DispatchSemaphore(value: 0)
        let result = ResultBox()
        let capture = logLines
        let box = self.box
        let done = finished
        let thread = Thread {
            do {
                let loop = try EventLoop()
                var logger = Logger(label: "sluice-test") { label in CapturingLogHandler(capture: capture) }
                logger.logLevel = .info
                let server = try ProxyServer(
                    configuration: configuration.with(listen: listen), loop: loop, logger: logger, hooks: hooks)
                box.server = server
                result.value = .success((loop, server.localAddress.port))
                ready.signal()
                loop.run()
                box.admin = nil
                box.server = nil
            } catch {
                result.value = .failure(error)
                ready.signal()
            }
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
        ready.wait()
        switch result.value! {
        case .success(let (loop, port)):
            self.loop = loop
            self.port = port
        case .failure(let error):
            // No deinit for a harness that never started: its file goes now.
            if let file = ownedCacheFile {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
            }
            throw error
        }
    }

    /// Runs `body` with the server on its loop thread and returns its result.
    public func onLoop<T: Sendable>(_ body: @escaping @Sendable (ProxyServer) -> T) -> T {
        let semaphore = DispatchSemaphore(value: 0)
        let output = Locked<T?>(nil)
        let box = self.box
        loop.execute {
            if let server = box.server { output.withLock { $0 = body(server) } }
            semaphore.signal()
        }
        semaphore.wait()
        return output.withLock { $0 }!
    }

    /// Starts the admin API next to the proxy (on `listen`, a free loopback port by default); returns its port.
    public func startAdmin(token: String = "", listen: String = "127.0.0.1:0") throws -> UInt16 {
        let box = self.box
        let result = onLoop { server -> Result<UInt16, EventIOError> in
            do {
                let admin = try AdminServer(proxy: server, listen: listen, token: token)
                box.admin = admin
                return .success(admin.localAddress.port)
            } catch let error as EventIOError {
                return .failure(error)
            } catch {
                return .failure(EventIOError(operation: "start the admin API: \(error)", code: 0))
            }
        }
        return try result.get()
    }

    /// A snapshot of the counters.
    public var stats: StatsSnapshot {
        onLoop { server in
            StatsSnapshot(
                requests: server.stats.requests, responses: server.stats.responses, errors: server.stats.errors,
                connectionsOpen: server.stats.connectionsOpen, upstreamTasks: server.stats.upstreamTasks,
                upstreamConnections: server.stats.upstreamConnections, tunnels: server.stats.tunnels,
                validationRejected: server.stats.validationRejected,
                validationReported: server.stats.validationReported,
                contractChecked: server.stats.contractChecked, contractFailed: server.stats.contractFailed,
                jsonStripped: server.stats.jsonStripped, jsonUntouched: server.stats.jsonUntouched,
                cacheHits: server.stats.cacheHits, cacheStores: server.stats.cacheStores,
                upstreamNativeTransfers: server.stats.upstreamNativeTransfers,
                upstreamCurlTransfers: server.stats.upstreamCurlTransfers,
                upstreamSplicedBodies: server.stats.upstreamSplicedBodies,
                upstreamSplicedBytes: server.stats.upstreamSplicedBytes,
                tunnelsSpliced: server.stats.tunnelsSpliced)
        }
    }

    /// Graceful shutdown, as SIGTERM does; returns when the loop has stopped.
    public func shutdown() {
        let box = self.box
        let loop = self.loop
        guard !box.stopped else { return }
        box.stopped = true
        loop.execute {
            box.admin?.close()
            box.server?.shutdown { loop.stop() }
        }
        finished.wait()
    }

    /// Waits (up to `timeout` seconds) until `condition` holds.
    public func waitUntil(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }

    deinit {
        shutdown()
        if let file = ownedCacheFile {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
        }
    }
}

/// Counters copied off the loop.
public struct StatsSnapshot: Sendable, Equatable {
    public var requests: Int
    public var responses: Int
    public var errors: Int
    public var connectionsOpen: Int
    public var upstreamTasks: Int
    public var upstreamConnections: Int
    public var tunnels: Int
    public var validationRejected: Int
    public var validationReported: Int
    public var contractChecked: Int
    public var contractFailed: Int
    public var jsonStripped: Int
    public var jsonUntouched: Int
    public var cacheHits: Int
    public var cacheStores: Int
    /// Upstream tasks each transport carried (`upstream.engine`).
    public var upstreamNativeTransfers: Int
    public var upstreamCurlTransfers: Int
    /// Bodies (and bytes) moved socket to socket in the kernel.
    public var upstreamSplicedBodies: Int
    public var upstreamSplicedBytes: Int64
    /// Tunnels whose download went on in the kernel.
    public var tunnelsSpliced: Int
}

/// Collects log lines for assertions.
public final class LogCapture: Sendable {
    private let lines = Locked<[String]>([])
    public init() {}
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    /// Every line so far.
    public var all: [String] { lines.withLock { $0 } }
}

struct CapturingLogHandler: LogHandler {
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        capture.append("\(event.level) \(event.message)")
    }
}

/// The server, touched only on the loop thread (set there, read inside `loop.execute`).
final class ServerBox: @unchecked Sendable {
    var server: ProxyServer?
    var admin: AdminServer?
    var stopped = false
}

/// The start-up result handed from the loop thread to the test thread (ordered by a semaphore).
final class ResultBox: @unchecked Sendable {
    var value: Result<(EventLoop, UInt16), any Error>?
}
