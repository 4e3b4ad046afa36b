import Foundation
import Logging
import SluiceTestKit
import Testing

@testable import Sluice

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Buffered log output")
struct LogOutputTests {
    /// `F_SETPIPE_SZ` (Linux; not exported to Swift by Glibc).
    static let setPipeSize: Int32 = 1031

    /// A pipe whose read end never blocks: what has been written so far.
    final class Pipe {
        let read: Int32
        let write: Int32
        init() {
            var fds: [Int32] = [0, 0]
            _ = pipe(&fds)
            read = fds[0]
            write = fds[1]
            _ = fcntl(read, F_SETFL, fcntl(read, F_GETFL) | O_NONBLOCK)
            // Room for more than one buffer's worth without the writer blocking.
            _ = fcntl(write, LogOutputTests.setPipeSize, 1 << 20)
        }
        func drain() -> String {
            var out: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = Glibc.read(read, &chunk, chunk.count)
                guard count > 0 else { break }
                out += chunk[..<count]
            }
            return String(decoding: out, as: UTF8.self)
        }
        deinit {
            close(read)
            close(write)
        }
    }

    @Test("Lines wait in the buffer until a flush, a full buffer or an urgent line; none is lost or split")
    func buffering() {
        let pipe = Pipe()
        let output = LogOutput(descriptor: pipe.write)
        output.append("one")
        output.append("two")
        #expect(pipe.drain() == "")
        #expect(output.pending == 8)
        #expect(output.flush(waitingUpTo: 10))
        #expect(pipe.drain() == "one\ntwo\n")
        #expect(output.pending == 0)
        // An urgent line goes out at once, after the lines before it.
        output.append("three")
        output.append("stopping", urgent: true)
        #expect(output.pending == 0)
        #expect(output.flush(waitingUpTo: 10))
        #expect(pipe.drain() == "three\nstopping\n")
        // Past the capacity the buffer is written whole: every line complete, in order.
        let line = String(repeating: "x", count: 99)
        var written = ""
        for _ in 0..<(LogOutput.capacity / 100) { output.append(line) }
        written += pipe.drain()
        #expect(written.isEmpty)
        output.append(line)
        #expect(output.pending == 0)
        // (No flush: waiting for the writer alone.)
        #expect(
            eventually {
                written += pipe.drain()
                return written.count >= (LogOutput.capacity / 100 + 1) * 100
            })
        #expect(written.count == (LogOutput.capacity / 100 + 1) * 100)
        #expect(written.split(separator: "\n").allSatisfy { $0 == line })
    }

    @Test("The handler writes swift-log's stream format; the access log writes its lines through it")
    func handlerFormat() throws {
        let pipe = Pipe()
        let output = LogOutput(descriptor: pipe.write)
        var logger = Logger(label: "sluice") { label in BufferedLogHandler(label: label, output: output) }
        logger.logLevel = .info
        logger.info("hello", metadata: ["b": "2", "a": "1"])
        logger.debug("not shown")
        output.flush(waitingUpTo: 10)
        let text = pipe.drain()
        #expect(text.hasSuffix(" info sluice: a=1 b=2 [SluiceTests] hello\n"), "\(text)")
        #expect(text.count > 24 && text.dropFirst(4).hasPrefix("-"))

        let stats = Stats()
        let access = AccessLog(logger: logger, accessEnabled: true, stats: stats)
        let record = ExchangeRecord(
            client: "127.0.0.1:5000", method: "GET", url: "http://a.example/x", status: 200, bytesSent: 1024,
            duration: 0.001234, aborted: false)
        access.exchangeDidComplete(record)
        #expect(pipe.drain() == "")  // buffered
        #expect(logger.handler is BufferedLogHandler)
        output.flush(waitingUpTo: 10)
        let accessLine = pipe.drain()
        #expect(
            accessLine.hasSuffix(" info sluice: [Sluice] 127.0.0.1:5000 \"GET http://a.example/x\" 200 1024 1.234ms\n"),
            "\(accessLine)")
        #expect(accessLine.dropLast().hasSuffix(AccessLog.line(record)))
    }

    @Test(
        "An output nobody reads never blocks the caller: lines past the backlog are dropped whole and counted once it moves"
    )
    func blockedOutput() throws {
        signal(SIGPIPE, SIG_IGN)  // (as the proxy does) the writer may meet a closed pipe
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        _ = fcntl(fds[1], Self.setPipeSize, 4096)  // a small pipe, full after a few lines
        let output = LogOutput(descriptor: fds[1], backlog: 64 * 1024)
        defer {
            // The read end first: a writer still blocked gets EPIPE and stops before its
            // descriptor's number can be another file's.
            close(fds[0])
            output.flush(waitingUpTo: 10)
            close(fds[1])
        }
        // 4,000 numbered lines of 100 bytes, urgent every 100th: 400 KB against 64 KiB of backlog
        // and a pipe nobody reads. The caller's thread must get through all of them.
        let done = DispatchSemaphore(value: 0)
        let lines = 4000
        Thread {
            for number in 0..<lines {
                let text = String(number)
                output.append(text + String(repeating: "y", count: 100 - text.count), urgent: number % 100 == 99)
            }
            output.flush()
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 30) == .success, "appending blocked on the full pipe")
        // Now read until the writer is idle and the pipe empty: the lines that waited, in order
        // and whole, each run of dropped lines counted by one line where they were.
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        let drained = eventually(timeout: 30, every: 0.001) {
            let idle = output.flush(waitingUpTo: 0)
            let count = Glibc.read(fds[0], &chunk, chunk.count)
            if count > 0 { bytes += chunk[..<count] }
            return count <= 0 && idle
        }
        #expect(drained)
        let received = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        let numbered = received.filter { !$0.contains("dropped") }
        let notices = received.filter { $0.contains("dropped") }
        try #require(!notices.isEmpty)
        #expect(numbered.allSatisfy { $0.utf8.count == 100 })
        let numbers = numbered.map { Int($0.prefix { $0 != "y" })! }
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count)
        let dropped = notices.map { notice in Int(notice.split(separator: " ").first { Int($0) != nil }!)! }
        #expect(dropped.reduce(0, +) + numbered.count == lines, "\(dropped) dropped, \(numbered.count) written")
        #expect(dropped.reduce(0, +) > lines / 2, "most lines could not wait: \(dropped)")
        #expect(notices.allSatisfy { $0.contains(" warning sluice: ") })
    }

    @Test("A regular file is written in place when the lines are handed over: no thread, nothing to wait for")
    func regularFileInPlace() throws {
        let path = TestScratch.root.appendingPathComponent("log-\(UUID().uuidString).txt").path
        let descriptor = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        try #require(descriptor >= 0)
        defer {
            close(descriptor)
            unlink(path)
        }
        let output = LogOutput(descriptor: descriptor)
        output.append("one")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "")
        output.append("two", urgent: true)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one\ntwo\n")
        output.append("three")
        output.flush()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one\ntwo\nthree\n")
        #expect(output.flush(waitingUpTo: 0))
    }
}
