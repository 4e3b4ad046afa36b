import EventIO
import Foundation
import SluiceTestKit
import Synchronization
import Testing

@Suite("EventIO: moving a body socket to socket in the kernel")
struct SocketSpliceTests {
    /// Collects what a connection reads once its owner lets it read again.
    final class Collector: ConnectionDelegate {
        var input: [UInt8] = []
        var events: [Connection.Event] = []
        func connectionDidRead(_ connection: Connection) {
            connection.withInput(upTo: connection.inputCount) { input.append(contentsOf: $0) }
            connection.drainInput(connection.inputCount)
        }
        func connectionDidDrain(_ connection: Connection) {}
        func connection(_ connection: Connection, didReceive event: Connection.Event) { events.append(event) }
    }

    struct Run {
        var outcome: SocketSplice.Outcome?
        var moved: Int64 = 0
        /// What the sink's peer received.
        var received: [UInt8] = []
        /// What the source's connection read itself after the splice.
        var after: [UInt8] = []
        /// What the connections told their delegate.
        var events: [Connection.Event] = []
    }

    /// A sender thread writes `payload` to the source connection (then closes when `close`), a
    /// receiver thread reads from the sink connection with a pause of `stall` seconds first;
    /// `count` bytes are spliced from source to sink; `sinkTimeout`: the sink's write timeout
    /// (the receiver's buffer then stays small, so that a stall fills it).
    static func run(_ payload: [UInt8], close: Bool, count: Int64?, stall: Double = 0, sinkTimeout: Int = 0) throws
        -> Run
    {
        let loop = try EventLoop()
        let collector = Collector()
        var accepted: [Connection] = []
        var run = Run()
        var splice: SocketSplice?
        let stopper = Timer(loop: loop) { loop.stop() }
        let listener = try Listener(loop: loop, address: SocketAddress("127.0.0.1:0")!) { fd, peer in
            let connection = Connection(loop: loop, fd: fd, peer: peer)
            connection.pauseReading()  // nothing is read before the splice
            connection.delegate = collector
            accepted.append(connection)
        }
        let port = listener.localAddress.port
        let received = Mutex<[UInt8]>([])
        let sinkDone = DispatchSemaphore(value: 0)
        let senderConnected = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread {
            let socket = try! TestSocket.connect(port: port)
            senderConnected.signal()
            try? socket.send(payload)
            if close { socket.shutdownWrite() }
            release.wait()
            socket.close()
        }.start()
        senderConnected.wait()
        Thread {
            // The sender's connection was made first, so it is accepted first.
            let socket = try! TestSocket.connect(port: port)
            socket.setTimeout(seconds: 5)
            if sinkTimeout > 0 {
                var size: Int32 = 64 * 1024
                setsockopt(socket.fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            Thread.sleep(forTimeInterval: stall)
            while let piece = try? socket.receive(), !piece.isEmpty {
                received.withLock { $0.append(contentsOf: piece) }
            }
            socket.close()
            sinkDone.signal()
        }.start()
        defer { release.signal() }
        // Once both are accepted: splice, then let the source read what is left.
        let start = Timer(loop: loop, repeats: true) {
            guard accepted.count == 2, splice == nil else { return }
            let (source, sink) = (accepted[0], accepted[1])
            if sinkTimeout > 0 { sink.setTimeouts(readMilliseconds: 0, writeMilliseconds: sinkTimeout) }
            splice = SocketSplice(loop: loop, from: source, to: sink, count: count, timeoutMilliseconds: 5000) {
                outcome in
                run.outcome = outcome
                run.moved = splice?.moved ?? -1
                sink.close()  // the receiver sees the end
                source.resumeReading()
                stopper.schedule(milliseconds: 200)
            }
            splice?.start()
        }
        start.schedule(milliseconds: 10)
        let guardTimer = Timer(loop: loop) { loop.stop() }
        guardTimer.schedule(milliseconds: 10_000)
        loop.run()
        start.cancel()
        #expect(sinkDone.wait(timeout: .now() + 10) == .success)
        run.received = received.withLock { $0 }
        run.after = collector.input
        run.events = collector.events
        _ = accepted
        return run
    }

    static func payload(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) } }

    @Test("A counted body moves whole and in order; what follows it stays for the source's own reading")
    func counted() throws {
        let body = Self.payload(3 << 20)
        let next = Array("GET /next HTTP/1.1\r\n\r\n".utf8)
        let run = try Self.run(body + next, close: false, count: Int64(body.count))
        #expect(run.outcome == .moved)
        #expect(run.moved == Int64(body.count))
        #expect(Self.same(run.received, body), "\(run.received.count) bytes")
        #expect(Self.same(run.after, next), "\(run.after.count) bytes after")
    }

    @Test("A sink that takes nothing for a while holds the source back; nothing is lost")
    func slowSink() throws {
        let body = Self.payload(6 << 20)
        let run = try Self.run(body, close: false, count: Int64(body.count), stall: 0.5)
        #expect(run.outcome == .moved)
        #expect(Self.same(run.received, body), "\(run.received.count) bytes")
    }

    @Test("A source that ends early: the outcome says so, and what it sent arrived")
    func sourceEndsEarly() throws {
        let sent = Self.payload(700_000)
        let run = try Self.run(sent, close: true, count: 1 << 20)
        #expect(run.outcome == .sourceEnded)
        #expect(run.moved == Int64(sent.count))
        #expect(Self.same(run.received, sent), "\(run.received.count) bytes")
    }

    @Test("Without a count, the source's end is the body's end")
    func untilEnd() throws {
        let sent = Self.payload(1_500_000)
        let run = try Self.run(sent, close: true, count: nil)
        #expect(run.outcome == .sourceEnded)
        #expect(Self.same(run.received, sent), "\(run.received.count) bytes")
    }

    @Test("A sink that takes nothing past its write timeout: its delegate hears the timeout, the splice fails")
    func sinkTimeout() throws {
        let body = Self.payload(16 << 20)
        let run = try Self.run(body, close: false, count: Int64(body.count), stall: 2, sinkTimeout: 300)
        #expect(run.outcome == .sinkFailed)
        #expect(run.events.contains(.timeout(reading: false)), "\(run.events)")
        #expect(run.moved < Int64(body.count))
    }

    /// Compared apart from the expectation, which would describe megabytes when it fails.
    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool { a == b }
}
