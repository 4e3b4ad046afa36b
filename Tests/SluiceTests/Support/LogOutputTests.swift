import Foundation
import Logging
import Testing

@testable import Sluice

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Buffered log output")
struct LogOutputTests {
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
            _ = fcntl(write, 1031, 1 << 20)  // F_SETPIPE_SZ
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
        output.flush()
        #expect(pipe.drain() == "one\ntwo\n")
        #expect(output.pending == 0)
        // An urgent line goes out at once, after the lines before it.
        output.append("three")
        output.append("stopping", urgent: true)
        #expect(pipe.drain() == "three\nstopping\n")
        // Past the capacity the buffer is written whole: every line complete, in order.
        let line = String(repeating: "x", count: 99)
        var written = ""
        for _ in 0..<(LogOutput.capacity / 100) { output.append(line) }
        written += pipe.drain()
        #expect(written.isEmpty)
        output.append(line)
        written += pipe.drain()
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
        output.flush()
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
        output.flush()
        let accessLine = pipe.drain()
        #expect(
            accessLine.hasSuffix(" info sluice: [Sluice] 127.0.0.1:5000 \"GET http://a.example/x\" 200 1024 1.234ms\n"),
            "\(accessLine)")
        #expect(accessLine.dropLast().hasSuffix(AccessLog.line(record)))
    }
}
