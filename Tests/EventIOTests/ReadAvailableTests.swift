import EventIO
import Foundation
import SluiceTestKit
import Synchronization
import Testing

@Suite("EventIO: reading what the socket holds")
struct ReadAvailableTests {
    /// Records the input length after each readable event, reading more when asked to.
    final class Reader: ConnectionDelegate {
        var connections: [Connection] = []
        var reads: [Int] = []
        var total = 0
        let bulk: Bool
        let expected: Int
        let done: () -> Void
        init(bulk: Bool, expected: Int, done: @escaping () -> Void) {
            self.bulk = bulk
            self.expected = expected
            self.done = done
        }
        func connectionDidRead(_ connection: Connection) {
            if bulk { connection.readAvailable(upTo: 1 << 20) }
            reads.append(connection.inputCount)
            total += connection.inputCount
            connection.drainInput(connection.inputCount)
            if total >= expected { done() }
        }
        func connectionDidDrain(_ connection: Connection) {}
        func connection(_ connection: Connection, didReceive event: Connection.Event) {}
    }

    /// Sends `count` bytes at once from another thread to a fresh connection; what each
    /// readable event found.
    static func receive(_ count: Int, bulk: Bool, piece: Int = Connection.smallReadPiece) throws -> [Int] {
        let loop = try EventLoop()
        let reader = Reader(bulk: bulk, expected: count) { loop.stop() }
        let listener = try Listener(loop: loop, address: SocketAddress("127.0.0.1:0")!) { fd, peer in
            let connection = Connection(loop: loop, fd: fd, peer: peer)
            connection.readPiece = piece
            connection.delegate = reader
            reader.connections.append(connection)
        }
        let port = listener.localAddress.port
        let payload = [UInt8](repeating: 7, count: count)
        let ready = DispatchSemaphore(value: 0)
        let read = DispatchSemaphore(value: 0)
        Thread {
            let socket = try! TestSocket.connect(port: port)
            ready.wait()  // all sent before the loop reads
            try! socket.send(payload)
            read.wait()  // open until the loop read it all (a close would be an event of its own)
            socket.close()
        }.start()
        defer { read.signal() }
        let start = Timer(loop: loop) { ready.signal() }
        start.schedule(milliseconds: 50)
        let guardTimer = Timer(loop: loop) { loop.stop() }
        guardTimer.schedule(milliseconds: 5000)
        loop.run()
        #expect(reader.total == count)
        return reader.reads
    }

    @Test("One read per event takes at most 4 KiB; readAvailable takes what the socket holds")
    func bulk() throws {
        let plain = try Self.receive(200_000, bulk: false)
        #expect(plain.allSatisfy { $0 <= 4096 }, "\(plain.prefix(5))")
        let bulk = try Self.receive(200_000, bulk: true)
        #expect(bulk.count < plain.count / 4, "\(bulk.count) events against \(plain.count)")
        #expect(bulk.contains { $0 > 4096 })
        // A small message is left as it was read: no extra call for it.
        #expect(try Self.receive(100, bulk: true) == [100])
    }

    @Test("An owner relaying a large body reads larger pieces per event")
    func largerPieces() throws {
        let large = try Self.receive(200_000, bulk: false, piece: 64 * 1024)
        #expect(large.allSatisfy { $0 <= 64 * 1024 })
        #expect(large.contains { $0 > 4096 }, "\(large.prefix(5))")
    }
}
