import Foundation

/// A real WebSocket origin for tests: `Tests/Fixtures/websocket/origin.py` (the `websockets`
/// package from PyPI, in ``TestVenv``), on 127.0.0.1 port 0, plain or TLS with a certificate
/// the test chose. Its paths are described in the script.
public final class WebSocketOrigin: @unchecked Sendable {
    public let port: UInt16
    private let process: Process

    /// Starts the origin; `certificate` and `key` (PEM files) make it a TLS one.
    public init(certificate: String? = nil, key: String? = nil) throws {
        (process, port) = try TestVenv.start("websocket/origin.py", [certificate, key].compactMap { $0 })
    }

    public func stop() { TestVenv.stop(process) }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    /// Runs `client.py MODE PROXY_PORT URL [CA]`: its status and what it printed (JSON).
    public static func client(_ mode: String, proxy: UInt16, url: String, caFile: String? = nil) throws -> (
        status: Int32, json: [String: Any]
    ) {
        try TestVenv.run("websocket/client.py", [mode, String(proxy), url] + [caFile].compactMap { $0 })
    }
}
