import EventIO
import Foundation
import SluiceTestKit
import Synchronization
import Testing

@Suite("EventIO: loop, timers, listener, connections")
struct EventLoopTests {
    @Test("A timer fires once after its delay; a cancelled timer does not fire")
    func timers() throws {
        let loop = try EventLoop()
        var fired: [String] = []
        let cancelled = Timer(loop: loop) { fired.append("cancelled") }
        cancelled.schedule(milliseconds: 10)
        cancelled.cancel()
        let once = Timer(loop: loop) { fired.append("once") }
        once.schedule(milliseconds: 20)
        let stop = Timer(loop: loop) { loop.stop() }
        stop.schedule(milliseconds: 100)
        let start = Date()
        loop.run()
        #expect(fired == ["once"])
        #expect(Date().timeIntervalSince(start) >= 0.09)
    }

    @Test("A timer armed late in a busy callback waits its whole delay from when it was armed, never less")
    func timersNeverFireEarly() throws {
        let loop = try EventLoop()
        var armed: UInt64 = 0
        var waited: [UInt64] = []
        var delayed: EventIO.Timer?
        delayed = Timer(loop: loop) {
            waited.append(EventLoop.monotonicNanoseconds() - armed)
            if waited.count == 3 { loop.stop() } else { busyThenArm() }
        }
        // A callback that works for 60 ms (the loop's cached time goes stale), then arms 40 ms.
        func busyThenArm() {
            let until = EventLoop.monotonicNanoseconds() + 60_000_000
            while EventLoop.monotonicNanoseconds() < until {}
            armed = EventLoop.monotonicNanoseconds()
            delayed?.schedule(milliseconds: 40)
        }
        let start = Timer(loop: loop) { busyThenArm() }
        start.schedule(milliseconds: 1)
        loop.run()
        #expect(waited.count == 3)
        #expect(waited.allSatisfy { $0 >= 40_000_000 }, "waited \(waited.map { Double($0) / 1e6 }) ms")
    }

    @Test("fireSoon runs in this loop turn after the callbacks already due; deadlines replace it and it replaces them")
    func fireSoon() throws {
        let loop = try EventLoop()
        var fired: [String] = []
        let soon = Timer(loop: loop) { fired.append("soon") }
        let zero = Timer(loop: loop) { fired.append("zero") }
        let dropped = Timer(loop: loop) { fired.append("dropped") }
        let later = Timer(loop: loop) { fired.append("later") }
        loop.callSoon {
            fired.append("first")
            // A zero delay waits for the next turn; fireSoon does not, but lets due callbacks go first.
            zero.schedule(milliseconds: 0)
            soon.schedule(milliseconds: 40)
            soon.fireSoon()
            dropped.fireSoon()
            dropped.cancel()
            // A deadline set after fireSoon replaces it, as any new deadline replaces the last.
            later.fireSoon()
            later.schedule(milliseconds: 60)
        }
        loop.callSoon { fired.append("second") }
        let stop = Timer(loop: loop) { loop.stop() }
        stop.schedule(milliseconds: 120)
        loop.run()
        #expect(fired == ["first", "second", "soon", "zero", "later"])
        #expect(!soon.isScheduled)
    }

    @Test("othersReady: true while other callbacks wait in this loop turn, false for the last one")
    func othersReady() throws {
        let loop = try EventLoop()
        var seen: [Bool] = []
        loop.callSoon { seen.append(loop.othersReady) }
        loop.callSoon { seen.append(loop.othersReady) }
        loop.callSoon {
            seen.append(loop.othersReady)
            loop.stop()
        }
        loop.run()
        #expect(seen == [true, true, false])
    }

    @Test(
        "Turn-end observers hear once, after the callbacks due when they asked; the turn's end is not other work waiting"
    )
    func turnEnd() throws {
        final class Observer: TurnEndObserver {
            var heard: [String] = []
            let loop: EventLoop
            init(loop: EventLoop) { self.loop = loop }
            func loopTurnDidEnd() { heard.append("end \(loop.othersReady)") }
        }
        let loop = try EventLoop()
        let observer = Observer(loop: loop)
        let later = Timer(loop: loop) { observer.heard.append("soon \(loop.othersReady)") }
        let first = Timer(loop: loop) {
            loop.atTurnEnd(observer)
            observer.heard.append("asked \(loop.othersReady)")  // only the turn's end is due
            later.fireSoon()
            observer.heard.append("fired \(loop.othersReady)")
        }
        first.schedule(milliseconds: 1)
        let stop = Timer(loop: loop) { loop.stop() }
        stop.schedule(milliseconds: 50)
        loop.run()
        // A callback fired after the observer asked comes after the turn's end (as the sockets
        // that a poll finds ready all come before it).
        #expect(observer.heard == ["asked false", "fired true", "end true", "soon false"])
    }

    @Test("execute(_:) from another thread runs on the loop thread")
    func crossThread() throws {
        let loop = try EventLoop()
        let ran = Mutex(false)
        let running = DispatchSemaphore(value: 0)
        Thread {
            running.wait()  // the loop runs (and waits in epoll) before the call comes
            loop.execute {
                ran.withLock { $0 = true }
                loop.stop()
            }
        }.start()
        let guardTimer = Timer(loop: loop) { loop.stop() }
        guardTimer.schedule(milliseconds: 5000)
        let started = Timer(loop: loop) { running.signal() }
        started.schedule(milliseconds: 1)
        loop.run()
        #expect(ran.withLock { $0 })
    }

    final class Echo: ConnectionDelegate {
        var connections: [Connection] = []
        var events: [Connection.Event] = []
        func connectionDidRead(_ connection: Connection) { connection.moveInput(to: connection) }
        func connectionDidDrain(_ connection: Connection) {}
        func connection(_ connection: Connection, didReceive event: Connection.Event) {
            events.append(event)
            connection.closeAfterFlush()
        }
    }

    /// Runs a loop whose listener (on port 0) wraps each accepted socket and hands it to
    /// `attach`; a client thread sends `text`, half-closes and reads to the end. Returns what it
    /// read back and the listener's port.
    static func roundTrip(_ text: String, attach: @escaping (Connection) -> Void) throws -> (String, UInt16) {
        let loop = try EventLoop()
        let listener = try Listener(loop: loop, address: SocketAddress("127.0.0.1:0")!) { fd, peer in
            attach(Connection(loop: loop, fd: fd, peer: peer))
        }
        let port = listener.localAddress.port
        let received = Mutex<[UInt8]>([])
        Thread {
            let socket = try! TestSocket.connect(port: port)
            try! socket.send(text)
            socket.shutdownWrite()
            var all: [UInt8] = []
            while let bytes = try? socket.receive(), !bytes.isEmpty { all += bytes }
            received.withLock { $0 = all }
            loop.execute { loop.stop() }
        }.start()
        let guardTimer = Timer(loop: loop) { loop.stop() }
        guardTimer.schedule(milliseconds: 5000)
        loop.run()
        return (String(decoding: received.withLock { $0 }, as: UTF8.self), port)
    }

    @Test("A listener on port 0 accepts; a connection echoes bytes and sees the peer's FIN")
    func echo() throws {
        let echo = Echo()
        let (received, port) = try Self.roundTrip("hello, loop") { connection in
            connection.delegate = echo
            echo.connections.append(connection)
        }
        #expect(port != 0)
        #expect(received == "hello, loop")
        #expect(echo.events == [.endOfStream])
        #expect(echo.connections.first?.peer?.isLoopback == true)
    }

    @Test("An owning delegate hears the events; setting `delegate` replaces it, weakly held again")
    func owningDelegate() throws {
        let owner = Echo()
        let (received, _) = try Self.roundTrip("owned") { connection in
            connection.setOwningDelegate(owner)
            owner.connections.append(connection)
        }
        #expect(received == "owned")
        #expect(owner.events == [.endOfStream])
        let connection = try #require(owner.connections.first)
        #expect(connection.delegate === owner)
        var other: Recorder? = Recorder()
        connection.delegate = other
        #expect(connection.delegate === other)
        other = nil
        #expect(connection.delegate == nil, "a delegate set with `delegate` is weak: gone, nothing is told")
    }

    final class Recorder: ConnectionDelegate {
        var connection: Connection?
        var events: [Connection.Event] = []
        var drains = 0
        func connectionDidRead(_ connection: Connection) {}
        func connectionDidDrain(_ connection: Connection) { drains += 1 }
        func connection(_ connection: Connection, didReceive event: Connection.Event) { events.append(event) }
    }

    @Test("A write to a peer that reset the connection is dropped, not queued, and reported once")
    func writeToResetPeer() throws {
        let loop = try EventLoop()
        let recorder = Recorder()
        let listener = try Listener(loop: loop, address: SocketAddress("127.0.0.1:0")!) { fd, peer in
            let connection = Connection(loop: loop, fd: fd, peer: peer)
            connection.delegate = recorder
            connection.pauseReading()  // only the writes below may find out that the peer is gone
            recorder.connection = connection
        }
        let port = listener.localAddress.port
        Thread {
            let socket = try! TestSocket.connect(port: port)
            socket.reset()
        }.start()
        var queuedAfterFirst = -1
        var queuedAfterSecond = -1
        var brokenAfterFirst = false
        var drainsBefore = -1
        let piece = [UInt8](repeating: 0x61, count: 256 * 1024)
        let write = Timer(loop: loop) {
            guard let connection = recorder.connection else { return loop.stop() }
            drainsBefore = recorder.drains
            // The first write may still reach the socket's buffer before the RST is seen; keep
            // writing until one fails, as a proxy streaming a body would.
            for _ in 0..<8 where !connection.writeBroken { connection.write(piece) }
            brokenAfterFirst = connection.writeBroken
            queuedAfterFirst = connection.outputCount
            connection.write(piece)
            piece.withUnsafeBytes { connection.write($0, $0) }
            queuedAfterSecond = connection.outputCount
        }
        write.schedule(milliseconds: 200)
        let stop = Timer(loop: loop) { loop.stop() }
        stop.schedule(milliseconds: 400)
        loop.run()
        #expect(brokenAfterFirst)
        #expect(queuedAfterFirst == 0)
        #expect(queuedAfterSecond == 0)
        #expect(recorder.drains == drainsBefore, "an emptied buffer is not a client that read")
        #expect(recorder.events.count == 1)
        if case .error(let code, let resolving) = recorder.events.first {
            #expect([ECONNRESET, EPIPE].contains(code))
            #expect(!resolving)
        } else {
            Issue.record("expected one error event, got \(recorder.events)")
        }
    }

    @Test(
        "Writes with `more` are held back (by the kernel, or in a busy turn by the connection) only until the end of the loop turn"
    )
    func moreIsPushedAtEndOfTurn() throws {
        let loop = try EventLoop()
        let recorder = Recorder()
        var descriptor: Int32 = -1
        let listener = try Listener(loop: loop, address: SocketAddress("127.0.0.1:0")!) { fd, peer in
            let connection = Connection(loop: loop, fd: fd, peer: peer)
            connection.setNoDelay()
            connection.delegate = recorder
            recorder.connection = connection
            descriptor = fd
        }
        let port = listener.localAddress.port
        let received = Mutex(0)
        Thread {
            let socket = try! TestSocket.connect(port: port, timeout: 2)
            var count = 0
            while count < 3000, let bytes = try? socket.receive(), !bytes.isEmpty { count += bytes.count }
            received.withLock { $0 = count }
        }.start()
        /// Bytes in the socket's send queue not yet sent (SIOCOUTQNSD, linux/sockios.h).
        func unsent() -> Int32 {
            var count: Int32 = -1
            _ = ioctl(descriptor, 0x894B, &count)
            return count
        }
        let piece = [UInt8](repeating: 0x62, count: 1000)
        var heldAtWrite: Int32 = -1
        var heldAfterTurn: Int32 = -1
        let write = Timer(loop: loop) {
            guard let connection = recorder.connection else { return loop.stop() }
            // Small pieces, each "more to come", and then nothing: no later write pushes them.
            piece.withUnsafeBytes { bytes in
                connection.write(bytes, more: true)
                connection.write(bytes, bytes, more: true)
            }
            // All in the kernel: the push due at the turn's end is not other work waiting, so
            // nothing waited in the connection (`MSG_MORE` on the two-piece `sendmsg` too).
            heldAtWrite = connection.heldCount == 0 ? unsent() : -2
        }
        write.schedule(milliseconds: 100)
        // The kernel would hold a partial segment for about 200 ms by itself.
        let check = Timer(loop: loop) { heldAfterTurn = unsent() }
        check.schedule(milliseconds: 130)
        let stop = Timer(loop: loop) { loop.stop() }
        stop.schedule(milliseconds: 400)
        loop.run()
        #expect(heldAtWrite == 3000, "MSG_MORE holds the small pieces back")
        #expect(heldAfterTurn == 0, "pushed at the end of the turn")
        #expect(received.withLock { $0 } == 3000)
    }

    @Test(
        "In a busy turn small writes wait for its end and leave in order; a large write or a close sends them first"
    )
    func busyTurnWritesLeaveAtItsEnd() throws {
        let loop = try EventLoop()
        var connections: [Connection] = []
        let listener = try Listener(loop: loop, address: SocketAddress("127.0.0.1:0")!) { fd, peer in
            let connection = Connection(loop: loop, fd: fd, peer: peer)
            connection.setNoDelay()
            connections.append(connection)
        }
        let port = listener.localAddress.port
        let large = Connection.holdLimit + 1000
        let expected: [[UInt8]] = [
            Array(repeating: 0x61, count: 100) + Array(repeating: 0x62, count: 200),
            Array(repeating: 0x63, count: 50) + Array(repeating: 0x64, count: large),
            Array(repeating: 0x65, count: 70),
        ]
        let received = Mutex<[[UInt8]]>([[], [], []])
        let readers = (0..<3).map { index in
            Thread {
                let socket = try! TestSocket.connect(port: port, timeout: 2)
                try! socket.send(Array("\(index)".utf8))  // which reader this is
                var bytes: [UInt8] = []
                while let piece = try? socket.receive(), !piece.isEmpty { bytes += piece }  // until FIN
                received.withLock { $0[index] = bytes }
            }
        }
        readers.forEach { $0.start() }
        var heldInTurn: [Int] = []
        var heldAtTurnEnd: [Int] = []
        var byReader: [Int: Connection] = [:]
        var keep: [EventIO.Timer] = []
        let write = Timer(loop: loop, repeats: true) {
            for connection in connections where connection.inputCount > 0 {
                let index = connection.withInput(upTo: 1) { Int($0[0]) - 0x30 }
                connection.drainInput(1)
                byReader[index] = connection
            }
            guard byReader.count == 3 else { return }
            let (first, second, third) = (byReader[0]!, byReader[1]!, byReader[2]!)
            // Another callback is due in this turn: the loop is busy.
            let other = Timer(loop: loop) { heldAtTurnEnd = [first, second, third].map(\.heldCount) }
            other.fireSoon()
            expected[0].withUnsafeBytes { bytes in
                first.write(UnsafeRawBufferPointer(rebasing: bytes[..<100]))
                first.write(UnsafeRawBufferPointer(rebasing: bytes[100...]))
            }
            expected[1].withUnsafeBytes { bytes in second.write(UnsafeRawBufferPointer(rebasing: bytes[..<50])) }
            expected[2].withUnsafeBytes { third.write($0) }
            heldInTurn = [first.heldCount, second.heldCount, third.heldCount]
            // Past the limit: the held bytes go first, with it, in one send.
            expected[1].withUnsafeBytes { bytes in second.write(UnsafeRawBufferPointer(rebasing: bytes[50...])) }
            heldInTurn.append(second.heldCount)
            third.close()  // held bytes count as written: sent before the close
            byReader = [:]
            connections = [first, second]
            let end = Timer(loop: loop) {
                first.shutdownWrite()
                second.shutdownWrite()
            }
            end.schedule(milliseconds: 20)
            let stop = Timer(loop: loop) { loop.stop() }
            stop.schedule(milliseconds: 500)
            keep = [other, end, stop]
        }
        write.schedule(milliseconds: 10)
        loop.run()
        keep.removeAll()
        _ = eventually(timeout: 2) { !received.withLock { $0.contains([]) } }  // the readers' last stores
        #expect(heldInTurn == [300, 50, 70, 0])
        #expect(heldAtTurnEnd == [300, 0, 0], "sent by the turn's end, after the callback due before it")
        let got = received.withLock { $0 }
        for index in 0..<3 {
            #expect(got[index] == expected[index], "reader \(index): \(got[index].count) bytes")
        }
    }

    @Test(
        "Socket addresses parse and print",
        arguments: [
            ("127.0.0.1:8080", "127.0.0.1:8080", true), ("[::1]:443", "[::1]:443", true),
            ("10.1.2.3:1", "10.1.2.3:1", false),
            ("[::ffff:127.0.0.1]:80", "[::ffff:127.0.0.1]:80", true),
        ])
    func addresses(text: String, printed: String, loopback: Bool) throws {
        let address = try #require(SocketAddress(text))
        #expect(address.description == printed)
        #expect(address.isLoopback == loopback)
    }
}

@Suite("EventIO: signals")
struct SignalTests {
    @Test("A watched signal runs its handler on the loop thread instead of the default action")
    func hangup() throws {
        let loop = try EventLoop()
        var received = 0
        let watcher = SignalWatcher(loop: loop, signal: .hangup) {
            received += 1
            loop.stop()
        }
        let guardTimer = Timer(loop: loop) { loop.stop() }
        guardTimer.schedule(milliseconds: 3000)
        let raiser = Timer(loop: loop) { kill(getpid(), SIGHUP) }
        raiser.schedule(milliseconds: 20)
        loop.run()
        withExtendedLifetime(watcher) {}
        #expect(received == 1)
    }
}
