import Foundation

/// The tests' Python with the PyPI packages (`websockets`, `grpcio`) that `scripts/setup.sh
/// --tests` puts in `.build/test-venv`, and the fixture scripts in `Tests/Fixtures`.
public enum TestVenv {
    /// The package's root (this file is in `Sources/SluiceTestKit`).
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    public static let python = root.appendingPathComponent(".build/test-venv/bin/python").path
    /// Whether the venv is there.
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: python) }

    /// A fixture script's path (`websocket/origin.py`).
    public static func script(_ name: String) -> String { root.appendingPathComponent("Tests/Fixtures/\(name)").path }

    /// Runs a fixture to its end; its status and what it printed (stdout and stderr), as JSON when it is.
    public static func run(_ name: String, _ arguments: [String]) throws -> (status: Int32, json: [String: Any]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script(name)] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        return (process.terminationStatus, json ?? ["output": String(decoding: data, as: UTF8.self)])
    }

    /// A server fixture that prints its port on its first line; stopped with ``stop(_:)``.
    public static func start(_ name: String, _ arguments: [String]) throws -> (Process, UInt16) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script(name)] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var bytes = Data()
        while !bytes.contains(0x0A) {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            bytes += data
        }
        let line = String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
        guard let port = UInt16(line.trimmingCharacters(in: .whitespaces)) else {
            stop(process)
            throw FixtureError(
                description: "\(name) did not start (is .build/test-venv there? scripts/setup.sh --tests)")
        }
        return (process, port)
    }

    /// SIGKILL: the test runner's process may ignore SIGTERM, and children inherit that.
    public static func stop(_ process: Process) {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    struct FixtureError: Error, CustomStringConvertible {
        let description: String
    }
}
