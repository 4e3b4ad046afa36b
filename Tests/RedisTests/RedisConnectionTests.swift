import EventIO
import Foundation
import Redis
import SluiceTestKit
import Synchronization
import Testing

/// The Redis face against a real `redis-server` on loopback.
@Suite("Redis connection")
struct RedisConnectionTests {
    /// Keeps connections alive until the loop ends (they are loop-confined).
    final class Holder: @unchecked Sendable { var connections: [RedisConnection] = [] }

    /// Runs `body` on a fresh loop thread and waits for `done` (or 10 s).
    static func onLoop(_ body: @escaping @Sendable (EventLoop, @escaping @Sendable () -> Void) -> Void) throws {
        let loop = try EventLoop()
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            loop.execute { body(loop) { loop.stop() } }
            loop.run()
            finished.signal()
        }
        thread.start()
        #expect(finished.wait(timeout: .now() + 10) == .success, "the loop did not finish")
    }

    @Test(
        "Binary-safe SET and GET, errors as replies, pub/sub; a killed server closes the connection and fails what was pending"
    )
    func commands() throws {
        guard RedisServer.isInstalled else {
            Issue.record("redis-server is not installed (scripts/setup.sh --tests installs it)")
            return
        }
        let server = try RedisServer()
        let port = server.port
        let log = Mutex<[String]>([])
        let binary = (0...255).map { UInt8($0) } + [0, 0, 13, 10]
        let holder = Holder()
        try Self.onLoop { loop, done in
            var connection: RedisConnection?
            // The server goes away once the message and the PUBLISH reply (the last one) were both
            // read: a server killed earlier may reset a connection with replies still unread.
            var read = 0
            func oneRead() {
                read += 1
                if read == 2 { DispatchQueue.global().async { server.stop() } }
            }
            let subscriber = RedisConnection(loop: loop, host: "127.0.0.1", port: port) { _ in }
            holder.connections.append(subscriber)
            subscriber.subscribe("news") { message in
                log.withLock { $0.append("message " + (message.map { String(decoding: $0, as: UTF8.self) } ?? "nil")) }
                if message == nil { done() } else { oneRead() }
            }
            connection = RedisConnection(loop: loop, host: "127.0.0.1", port: port) { state in
                log.withLock { $0.append("state \(state)") }
                guard state == .connected, let connection else { return }
                connection.send([Array("SET".utf8), Array("k".utf8), binary]) { reply in
                    log.withLock { $0.append("set \(reply?.text ?? "nil")") }
                }
                connection.send([Array("GET".utf8), Array("k".utf8)]) { reply in
                    log.withLock { $0.append("get \(reply == .string(binary))") }
                }
                connection.send([Array("INCR".utf8), Array("k".utf8)]) { reply in
                    if case .error(let text)? = reply { log.withLock { $0.append("error \(text.prefix(3))") } }
                }
                connection.send([Array("GET".utf8), Array("missing".utf8)]) { reply in
                    log.withLock { $0.append("missing \(reply == .null)") }
                }
                connection.send([Array("PUBLISH".utf8), Array("news".utf8), Array("hello".utf8)]) { reply in
                    log.withLock { $0.append("published \(reply == .integer(1))") }
                    oneRead()
                }
            }
            holder.connections.append(connection!)
        }
        let lines = log.withLock { $0 }
        #expect(lines.contains("state connected"))
        #expect(lines.contains("set OK") && lines.contains("get true") && lines.contains("error ERR"))
        #expect(lines.contains("missing true") && lines.contains("published true"))
        #expect(lines.contains("message hello") && lines.contains("message nil"))
    }

    @Test(
        "Credentials: AUTH goes first and .connected waits for it; a wrong password closes with the server's refusal; an ACL user"
    )
    func credentials() throws {
        guard RedisServer.isInstalled else {
            Issue.record("redis-server is not installed (scripts/setup.sh --tests installs it)")
            return
        }
        let server = try RedisServer(password: "s3cret pass")
        #expect(try server.command(["ACL", "SETUSER", "app", "on", ">app-pw", "~*", "+@all"]) == "+OK")
        let port = server.port
        let log = Mutex<[String]>([])
        let holder = Holder()
        try Self.onLoop { loop, done in
            var remaining = 3
            func finished() {
                remaining -= 1
                if remaining == 0 { done() }
            }
            for (name, credentials) in [
                ("right", RedisConnection.Credentials(user: nil, password: "s3cret pass")),
                ("wrong", RedisConnection.Credentials(user: nil, password: "nope")),
                ("user", RedisConnection.Credentials(user: "app", password: "app-pw")),
            ] {
                var connection: RedisConnection?
                connection = RedisConnection(loop: loop, host: "127.0.0.1", port: port, credentials: credentials) {
                    state in
                    log.withLock { $0.append("\(name) \(state)") }
                    guard state == .connected, let connection else { return finished() }
                    connection.send([Array("PING".utf8)]) { reply in
                        log.withLock { $0.append("\(name) ping \(reply?.text ?? "nil")") }
                        finished()
                    }
                }
                holder.connections.append(connection!)
            }
        }
        let lines = log.withLock { $0 }
        #expect(lines.contains("right connected") && lines.contains("right ping PONG"), "\(lines)")
        #expect(lines.contains("user connected") && lines.contains("user ping PONG"), "\(lines)")
        #expect(!lines.contains("wrong connected"), "\(lines)")
        #expect(
            lines.contains { $0.hasPrefix("wrong closed(\"the server refused the credentials (WRONGPASS") }, "\(lines)")
        #expect(!lines.joined().contains("nope") && !lines.joined().contains("s3cret"))
    }

    @Test("Nothing listening: the connection reports closed, and sends are refused")
    func refused() throws {
        let free = try TestListener()
        let port = free.port
        free.close()
        let states = Mutex<[RedisConnection.State]>([])
        let holder = Holder()
        let refusedAfter = Mutex<Bool?>(nil)
        try Self.onLoop { loop, done in
            let connection = RedisConnection(loop: loop, host: "127.0.0.1", port: port) { state in
                states.withLock { $0.append(state) }
                // Sent only after the state is known (the callback runs with the connection settled).
                loop.callSoon {
                    refusedAfter.withLock { $0 = !holder.connections[0].send([Array("PING".utf8)]) { _ in } }
                    done()
                }
            }
            holder.connections.append(connection)
        }
        let seen = states.withLock { $0 }
        #expect(seen.count == 1)
        #expect(refusedAfter.withLock { $0 } == true)
        if case .closed(let reason)? = seen.first { #expect(!reason.isEmpty) } else { Issue.record("closed") }
    }
}
