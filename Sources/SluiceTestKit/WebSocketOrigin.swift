import Foundation

/// A real WebSocket origin for tests: `Tests/Fixtures/websocket/origin.py` (the `websockets`
/// package from PyPI, in the venv `scripts/setup.sh --tests` makes under `.build/test-venv`), on
/// 127.0.0.1 port 0, plain or TLS with a certificate the test chose. Its paths are described in
/// the script.
public final class WebSocketOrigin: @unchecked Sendable {
    public let port: UInt16
    private let process: Process

    /// The package's root (this file is in `Sources/SluiceTestKit`).
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// The venv's Python, with `websockets`.
    public static let python = root.appendingPathComponent(".build/test-venv/bin/python").path
    /// The fixture scripts.
    public static func script(_ name: String) -> String {
        root.appendingPathComponent("Tests/Fixtures/websocket/\(name)").path
    }

    /// Whether the venv is there (`scripts/setup.sh --tests` makes it).
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: python) }

    /// Starts the origin; `certificate` and `key` (PEM files) make it a TLS one.
    public init(certificate: String? = nil, key: String? = nil) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [Self.script("origin.py")] + [certificate, key].compactMap { $0 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line = output.fileHandleForReading.readLine()
        guard let port = UInt16(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            kill(process.processIdentifier, SIGKILL)
            throw OriginError(
                "the WebSocket origin did not start (is .build/test-venv there? scripts/setup.sh --tests)")
        }
        self.port = port
    }

    public func stop() {
        // SIGKILL: the test runner's process may ignore SIGTERM, and children inherit that.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    /// Runs `client.py MODE PROXY_PORT URL [CA]` and returns what it printed (JSON) and its status.
    public static func client(_ mode: String, proxy: UInt16, url: String, caFile: String? = nil) throws -> (
        status: Int32, json: [String: Any]
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script("client.py"), mode, String(proxy), url] + [caFile].compactMap { $0 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        return (process.terminationStatus, json ?? ["output": String(decoding: data, as: UTF8.self)])
    }

    struct OriginError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

extension FileHandle {
    /// The first line (without its newline); the process prints nothing else.
    fileprivate func readLine() -> String {
        var bytes: [UInt8] = []
        while !bytes.contains(0x0A) {
            let data = availableData
            if data.isEmpty { break }
            bytes += data
        }
        return String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
    }
}
