import Foundation

/// A throwaway `redis-server` from Debian for a test: a free loopback port, no persistence, its
/// own folder; stopped (SIGKILL) and restartable on the same port to test outages.
public final class RedisServer: @unchecked Sendable {
    public let port: UInt16
    private let directory: URL
    private var process: Process?

    /// Started with `--cluster-enabled yes` (a node for ``RedisServer/makeCluster(_:)``).
    public let clusterNode: Bool
    /// `--requirepass`: the test's own commands authenticate with it.
    public let password: String?

    public init(clusterNode: Bool = false, password: String? = nil) throws {
        self.clusterNode = clusterNode
        self.password = password
        directory = TestScratch.root.appendingPathComponent("redis-\(UUID().uuidString)")
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
        process.arguments =
            [
                "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir",
                directory.path,
                "--daemonize", "no",
            ]
            + (clusterNode
                ? ["--cluster-enabled", "yes", "--cluster-config-file", directory.path + "/nodes.conf"] : [])
            + (password.map { ["--requirepass", $0] } ?? [])
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

    /// Joins cluster nodes into a Redis Cluster of masters (`redis-cli --cluster create`) and
    /// waits until it reports `cluster_state:ok` everywhere.
    public static func makeCluster(_ nodes: [RedisServer]) throws {
        try cli(
            ["--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" } + [
                "--cluster-replicas", "0", "--cluster-yes",
            ])
        let deadline = Date().addingTimeInterval(15)
        for node in nodes {
            while !((try? node.bulk(["CLUSTER", "INFO"])) ?? "").contains("cluster_state:ok") {
                guard Date() < deadline else { throw TestError("the cluster did not become ok") }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    /// Moves every slot of `from` to `to` with their keys (`redis-cli --cluster reshard`).
    public static func moveAllSlots(from: RedisServer, to: RedisServer) throws {
        let fromID = try from.bulk(["CLUSTER", "MYID"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let toID = try to.bulk(["CLUSTER", "MYID"]).trimmingCharacters(in: .whitespacesAndNewlines)
        try cli([
            "--cluster", "reshard", "127.0.0.1:\(from.port)", "--cluster-from", fromID, "--cluster-to", toID,
            "--cluster-slots", "16384", "--cluster-yes",
        ])
    }

    /// Runs `redis-cli` to its end; a failure names the command.
    private static func cli(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestError("redis-cli \(arguments.prefix(2).joined(separator: " ")) failed")
        }
    }

    /// A command whose answer is a bulk string: its text (other answers: their first line).
    public func bulk(_ arguments: [String]) throws -> String {
        try exchange(arguments.map { Array($0.utf8) }) { answer in
            guard let end = answer.firstIndex(of: 0x0A) else { return nil }
            let head = String(decoding: answer[..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard head.hasPrefix("$"), let length = Int(head.dropFirst()) else { return head }
            if length < 0 { return "" }
            guard answer.count >= end + 1 + length else { return nil }
            return String(decoding: answer[(end + 1)..<(end + 1 + length)], as: UTF8.self)
        }
    }

    /// Sends one command in RESP on a fresh connection and reads until `complete` makes sense of
    /// what arrived.
    private func exchange(_ arguments: [[UInt8]], complete: ([UInt8]) -> String?) throws -> String {
        let socket = try TestSocket.connect(port: port, timeout: 2)
        defer { socket.close() }
        func resp(_ arguments: [[UInt8]]) -> [UInt8] {
            var request = Array("*\(arguments.count)\r\n".utf8)
            for argument in arguments {
                request += Array("$\(argument.count)\r\n".utf8) + argument + Array("\r\n".utf8)
            }
            return request
        }
        // With a password, AUTH goes first and its +OK is skipped.
        let login = password.map { resp([Array("AUTH".utf8), Array($0.utf8)]) } ?? []
        try socket.send(login + resp(arguments))
        var answer: [UInt8] = []
        let skip = password == nil ? 0 : 5
        while true {
            answer += try socket.receive()
            guard answer.count > skip else { continue }
            if let text = complete(Array(answer[skip...])) { return text }
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

    /// Sends one command with binary arguments; returns the reply's first line.
    @discardableResult
    public func raw(_ arguments: [[UInt8]]) throws -> String {
        try exchange(arguments) { answer in
            answer.contains(0x0A) ? String(decoding: answer.prefix { $0 != 0x0D }, as: UTF8.self) : nil
        }
    }
}
