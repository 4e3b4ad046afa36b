import EventIO
import Foundation
import SluiceTestKit
import Testing

@Suite("EventIO: read timeouts")
struct ReadTimeoutTests {
    /// Records what an accepted connection reports.
    final class Watcher: ConnectionDelegate {
        var connection: Connection?
        var timeouts = 0
        var bytes = 0
        func connectionDidRead(_ connection: Connection) {
            bytes += connection.inputCount
            connection.drainInput(connection.inputCount)
        }
        func connectionDidDrain(_ connection: Connection) {}
        func connection(_ connection: Connection, didReceive event: Connection.Event) {
            if case .timeout(reading: true) = event { timeouts += 1 }
        }
    }

    /// Accepts one silent client; `setUp` runs on the accepted connection, `later` after
    /// `laterAt` ms; after `wait` ms the client sends one byte, and the loop runs 200 ms more.
    static func run(
        wait: Int, laterAt: Int = 50, setUp: @escaping (Connection) -> Void, later: @escaping (Connection) -> Void
    ) throws -> Watcher {
        let loop = try EventLoop()
        let watcher = Watcher()
        let listener = try Listener(loop: loop, address: SocketAddress("127.0.0.1:0")!) { fd, peer in
            let connection = Connection(loop: loop, fd: fd, peer: peer)
            connection.delegate = watcher
            watcher.connection = connection
            setUp(connection)
        }
        let port = listener.localAddress.port
        let send = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let socket = try! TestSocket.connect(port: port)
            send.wait()
            try! socket.send([7])
            done.wait()
            socket.close()
        }.start()
        defer { done.signal() }
        let second = Timer(loop: loop) { if let connection = watcher.connection { later(connection) } }
        second.schedule(milliseconds: laterAt)
        let poke = Timer(loop: loop) { send.signal() }
        poke.schedule(milliseconds: wait)
        let stop = Timer(loop: loop) { loop.stop() }
        stop.schedule(milliseconds: wait + 200)
        loop.run()
        return watcher
    }

    @Test("A read timeout fires when nothing comes; set to 0 later, it stays off, armed or paused meanwhile")
    func zeroStaysOff() throws {
        let fires = try Self.run(
            wait: 400, setUp: { $0.setTimeouts(readMilliseconds: 100, writeMilliseconds: 0) }, later: { _ in })
        #expect(fires.timeouts == 1)

        let armed = try Self.run(
            wait: 400, setUp: { $0.setTimeouts(readMilliseconds: 100, writeMilliseconds: 0) },
            later: { $0.setTimeouts(readMilliseconds: 0, writeMilliseconds: 0) })
        #expect(armed.timeouts == 0)
        #expect(armed.bytes == 1)

        let paused = try Self.run(
            wait: 400,
            setUp: {
                $0.setTimeouts(readMilliseconds: 100, writeMilliseconds: 0)
                $0.pauseReading()
            },
            later: {
                $0.setTimeouts(readMilliseconds: 0, writeMilliseconds: 0)
                $0.resumeReading()
            })
        #expect(paused.timeouts == 0)
        #expect(paused.bytes == 1)
    }

    @Test("Setting a read timeout again starts it counting again")
    func restart() throws {
        // 400 ms, set again at 300 ms: due at 700 ms, not 400; the byte at 550 ms comes first.
        let watcher = try Self.run(
            wait: 550, laterAt: 300, setUp: { $0.setTimeouts(readMilliseconds: 400, writeMilliseconds: 0) },
            later: { $0.setTimeouts(readMilliseconds: 400, writeMilliseconds: 0) })
        #expect(watcher.bytes == 1)
        #expect(watcher.timeouts == 0)
    }
}
