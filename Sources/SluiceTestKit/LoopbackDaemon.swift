import Foundation

/// A real server program from Debian run for a test (Squid, stunnel, microsocks…): on a free
/// loopback port, with its files in a folder of its own, in the foreground; ready once the port
/// accepts connections, and killed (SIGKILL) with its folder removed when released.
public final class LoopbackDaemon: @unchecked Sendable {
    public let port: UInt16
    public let directory: URL
    private let process = Process()

    /// Whether `path` is there to run (`scripts/setup.sh --tests` installs the servers tests use).
    public static func isInstalled(_ path: String) -> Bool { FileManager.default.isExecutableFile(atPath: path) }

    /// Writes `files` (name → contents) into the folder, then runs `executable` with the
    /// arguments `arguments(port, folder)` gives. `shared`: the folder is open to all users
    /// (a server that drops root for its own user must reach its files).
    public init(
        _ executable: String, files: (UInt16, URL) -> [String: String] = { _, _ in [:] }, shared: Bool = false,
        arguments: (UInt16, URL) -> [String]
    ) throws {
        let name = URL(fileURLWithPath: executable).lastPathComponent
        directory = TestScratch.root.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if shared { chmod(directory.path, 0o777) }
        let free = try TestListener()
        port = free.port
        free.close()
        for (file, contents) in files(port, directory) {
            try contents.write(to: directory.appendingPathComponent(file), atomically: true, encoding: .utf8)
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments(port, directory)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(15)
        while (try? TestSocket.connect(port: port, timeout: 1)) == nil {
            guard Date() < deadline, process.isRunning else { throw TestError("\(name) did not start") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}
