import Foundation

/// A throwaway `redis-server` from Debian for a test: a free loopback port, no persistence, its
/// own folder; stopped (SIGKILL) and restartable on the same port to test outages.
public final class RedisServer: @unchecked Sendable {
    public let port: UInt16
    private let directory: URL
    private var process: Process?

    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let free = try TestListener()
        port = free.port
        free.close()
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Whether Debian's redis-server is installed (`scripts/setup.sh --tests` installs it).
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server") }

    /// Starts (again) on the same port and waits until it answers.
    public func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        process.arguments = [
            "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory.path,
            "--daemonize", "no",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(10)
        while (try? command(["PING"])) != "+PONG" {
            guard Date() < deadline, process.isRunning else { throw TestError("redis-server did not start") }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// Kills the server at once (no shutdown: like a crash or a pulled cable).
    public func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// Sends one command in RESP and returns the first line of the answer (a test's probe).
    @discardableResult
    public func command(_ arguments: [String]) throws -> String {
        try raw(arguments.map { Array($0.utf8) })
    }

    /// Sends one command with binary arguments; returns the reply's first line (and a bulk
    /// string's bytes as text after it).
    @discardableResult
    public func raw(_ arguments: [[UInt8]]) throws -> String {
        let socket = try TestSocket.connect(port: port, timeout: 2)
        defer { socket.close() }
        var request = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments { request += Array("$\(argument.count)\r\n".utf8) + argument + Array("\r\n".utf8) }
        try socket.send(request)
        var answer: [UInt8] = []
        while !answer.contains(0x0A) { answer += try socket.receive() }
        return String(decoding: answer.prefix { $0 != 0x0D }, as: UTF8.self)
    }
}
