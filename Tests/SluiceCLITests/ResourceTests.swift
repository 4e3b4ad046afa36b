import Foundation
import SluiceTestKit
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Resource exhaustion against a real `sluice serve` process, measured from the outside: its
/// file descriptors (`/proc/PID/fd`) return to their baseline and its memory stays bounded.
@Suite("Adversarial: resources", .serialized)
struct ResourceTests {
    /// A running `sluice serve` with a config, its output drained.
    final class Server {
        let process: Process
        let port: UInt16
        private let pipe: Pipe
        private let files: [String]

        /// What it wrote (stdout and stderr), the first MiB.
        final class Output: Sendable {
            let text = Mutex("")
        }
        private let output = Output()

        init(_ yaml: String, descriptorLimit: Int? = nil) throws {
            let directory = try CLI.workingDirectory()
            let config = try CLI.temporaryFile(
                yaml + "\ncache: { path: \(directory.path)/cache.sqlite }\nlog: { access: false }\n")
            files = [config, directory.path]
            (process, pipe, port) = try CLI.serve(["--config", config], descriptorLimit: descriptorLimit)
            let output = self.output
            pipe.fileHandleForReading.readabilityHandler = { handle in
                let text = String(decoding: handle.availableData, as: UTF8.self)
                output.text.withLock { if $0.utf8.count < 1 << 20 { $0 += text } }
            }
            _ = try CLI.connect(port)
        }

        var written: String { output.text.withLock { $0 } }

        /// CPU seconds it used so far (user and system, `/proc/PID/stat`).
        var cpuSeconds: Double {
            guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
                let close = text.lastIndex(of: ")")
            else { return -1 }
            let fields = text[text.index(after: close)...].split(separator: " ")
            // After the name: state is field 3, utime 14 and stime 15 (1-based, name included).
            guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return -1 }
            return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }

        deinit {
            process.terminate()
            process.waitUntilExit()
            pipe.fileHandleForReading.readabilityHandler = nil
            for file in files { CLI.remove(file) }
        }

        /// Open descriptors now.
        var descriptors: Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd").count) ?? -1
        }

        /// A `/proc/PID/status` figure in KiB (`VmRSS`, `VmHWM`).
        func memory(_ key: String) -> Int {
            guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
            else { return -1 }
            let line = text.split(separator: "\n").first { $0.hasPrefix(key + ":") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
        }

        /// Waits until the descriptor count is at most `limit`; returns the last count seen.
        func settle(to limit: Int, timeout: Double = 10) -> Int {
            var count = descriptors
            _ = eventually(timeout: timeout, every: 0.05) {
                count = descriptors
                return count <= limit
            }
            return count
        }
    }

    static func streamingOrigin() throws -> OriginServer {
        try OriginServer(keepBodies: false) { request in
            if request.target.hasPrefix("/big") { return .stream(status: 200, headers: [], total: 64 << 20) }
            if request.method == "POST" { return .text("received \(request.bodyCount)") }
            return .text("ok")
        }
    }

    /// The descriptor count with a warm upstream connection and the cache file open.
    static func baseline(_ server: Server, _ origin: OriginServer) throws -> Int {
        let client = try RawClient(port: server.port)
        _ = try client.request(RawClient.get(origin.url("/warm")))
        client.socket.close()
        // The proxy closed its side: the count stops moving.
        return settled { server.descriptors } ?? server.descriptors
    }

    @Test("1,000 idle connections: the next client is served at once; descriptors return to baseline")
    func thousandIdle() throws {
        let origin = try Self.streamingOrigin()
        defer { origin.stop() }
        let server = try Server("limits: { max_connections: 1100 }")
        let baseline = try Self.baseline(server, origin)
        let idle = try (0..<1000).map { _ in try TestSocket.connect(port: server.port) }
        let start = Date()
        let normal = try RawClient(port: server.port)
        #expect(try normal.request(RawClient.get(origin.url("/x"))).text == "ok")
        #expect(Date().timeIntervalSince(start) < 2)
        #expect(server.descriptors >= baseline + 1000, "the idle connections were not all accepted")
        for socket in idle { socket.close() }
        normal.socket.close()
        let after = server.settle(to: baseline)
        #expect(after <= baseline, "descriptors: baseline \(baseline), after \(after)")
    }

    @Test("Out of descriptors: accepting pauses instead of spinning, is said once, and resumes when some are free")
    func descriptorsRunOut() throws {
        let origin = try Self.streamingOrigin()
        defer { origin.stop() }
        // A hard limit of 64: raising the soft one (as serve does) cannot get past it.
        let server = try Server("limits: { max_connections: 1000 }", descriptorLimit: 64)
        let baseline = try Self.baseline(server, origin)
        // More clients than descriptors left: the rest wait in the backlog.
        let idle = try (0..<(80 - baseline)).map { _ in try TestSocket.connect(port: server.port) }
        #expect(eventually(timeout: 5) { server.descriptors >= 64 }, "descriptors: \(server.descriptors)")
        let before = server.cpuSeconds
        Thread.sleep(forTimeInterval: 1)
        let spent = server.cpuSeconds - before
        #expect(spent < 0.2, "CPU seconds in one second with the backlog waiting: \(spent)")
        let failures = server.written.components(separatedBy: "accepting connections failed").count - 1
        #expect(failures == 1, "said once: \(server.written.suffix(400))")
        // Descriptors free again: waiting clients are taken and served.
        for socket in idle.prefix(40) { socket.close() }
        let client = try RawClient(port: server.port)
        #expect(try client.request(RawClient.get(origin.url("/after"))).text == "ok")
        for socket in idle.dropFirst(40) { socket.close() }
    }

    @Test("Clients that never read: the origin is paused, memory stays bounded, client_body closes them")
    func neverRead() throws {
        let origin = try Self.streamingOrigin()
        defer { origin.stop() }
        let server = try Server("timeouts: { client_body: 1s }")
        let baseline = try Self.baseline(server, origin)
        let rssBefore = server.memory("VmRSS")
        let clients = try (0..<10).map { n -> TestSocket in
            let socket = try TestSocket.connect(port: server.port)
            var size: Int32 = 4096
            setsockopt(socket.fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            try socket.send(RawClient.get(origin.url("/big/\(n)")))
            return socket
        }
        // Every client's transfer paused (its receive buffer and the proxy's window full): the
        // origin stops sending.
        #expect(settled(quiet: 0.3) { origin.streamedBytes } != nil)
        let growth = (server.memory("VmRSS") - rssBefore) / 1024
        // 10 × 64 MiB were asked for; the proxy holds a bounded window per client instead.
        #expect(growth < 48, "RSS grew \(growth) MiB")
        #expect(origin.streamedBytes < 10 * (16 << 20), "the origin pushed \(origin.streamedBytes >> 20) MiB")
        // Generous: under ThreadSanitizer the in-process origin fills the buffers slowly.
        let after = server.settle(to: baseline + 2, timeout: 25)
        #expect(after <= baseline + 2, "descriptors: baseline \(baseline), after \(after)")
        for socket in clients { socket.close() }
    }

    @Test("Clients that disconnect mid-response: every descriptor (client and upstream) returns")
    func disconnectMidResponse() throws {
        let origin = try Self.streamingOrigin()
        defer { origin.stop() }
        let server = try Server("")
        let baseline = try Self.baseline(server, origin)
        for round in 0..<20 {
            let client = try RawClient(port: server.port)
            try client.send(RawClient.get(origin.url("/big/\(round)")))
            _ = try client.reader.readHead()
            _ = try client.reader.skip(100_000)
            round % 2 == 0 ? client.socket.reset() : client.socket.close()
        }
        let after = server.settle(to: baseline)
        #expect(after <= baseline, "descriptors: baseline \(baseline), after \(after)")
        let next = try RawClient(port: server.port)
        #expect(try next.request(RawClient.get(origin.url("/x"))).text == "ok")
    }

    @Test("Slowloris: 200 trickling clients, others served at once, all closed after client_header")
    func slowloris() throws {
        let origin = try Self.streamingOrigin()
        defer { origin.stop() }
        let server = try Server("timeouts: { client_header: 1s }")
        let baseline = try Self.baseline(server, origin)
        let slow = try (0..<200).map { _ in try RawClient(port: server.port) }
        for client in slow { try client.send("GET \(origin.url("/")) HTTP/1.1\r\nHost: x\r\n") }
        let start = Date()
        let normal = try RawClient(port: server.port)
        #expect(try normal.request(RawClient.get(origin.url("/x"))).text == "ok")
        #expect(Date().timeIntervalSince(start) < 1)
        normal.socket.close()
        // Kept: the slow clients drip again later; the time between is the input (their header
        // timer must not restart), not a wait for something.
        Thread.sleep(forTimeInterval: 0.4)
        for client in slow { try? client.send("X-Drip: 1\r\n") }
        for client in slow { #expect(try client.reader.readResponse().status == 408) }
        let after = server.settle(to: baseline)
        #expect(after <= baseline, "descriptors: baseline \(baseline), after \(after)")
    }

    @Test("A cold 20 MiB body for 10 clients at once: one origin request, identical bodies, bounded memory")
    func collapsedLargeBody() throws {
        let origin = try OriginServer(keepBodies: false) { _ in
            .delay(
                seconds: 0.3,
                then: .stream(status: 200, headers: [("Cache-Control", "max-age=600")], total: 20 << 20))
        }
        defer { origin.stop() }
        let server = try Server("")
        _ = try Self.baseline(server, origin)
        let before = server.memory("VmHWM")
        let clients = try (0..<10).map { _ in try RawClient(port: server.port, timeout: 60) }
        for client in clients { try client.send(RawClient.get(origin.url("/large"))) }
        let responses = try clients.map { try $0.reader.readResponse() }
        #expect(origin.requests.filter { $0.target == "/large" }.count == 1)
        #expect(responses.allSatisfy { $0.status == 200 && $0.body.count == 20 << 20 })
        #expect(responses.allSatisfy { $0.body == responses[0].body })
        let peak = (server.memory("VmHWM") - before) / 1024
        #expect(peak < 48, "peak RSS grew \(peak) MiB serving 10 x 20 MiB")
        print(
            "resources: 10 collapsed clients x 20 MiB, peak RSS \(before / 1024) -> \(server.memory("VmHWM") / 1024) MiB"
        )
    }

    @Test("A 1 GiB upload streams through with bounded memory")
    func largeUpload() throws {
        let total = (Int(ProcessInfo.processInfo.environment["SLUICE_UPLOAD_MIB"] ?? "") ?? 1024) << 20
        let origin = try Self.streamingOrigin()
        defer { origin.stop() }
        let server = try Server("limits: { max_request_body: 2GiB }")
        _ = try Self.baseline(server, origin)
        let before = server.memory("VmHWM")
        let client = try RawClient(port: server.port, timeout: 60)
        try client.send("POST \(origin.url("/upload")) HTTP/1.1\r\nHost: x\r\nContent-Length: \(total)\r\n\r\n")
        let piece = [UInt8](repeating: 0x5A, count: 1 << 20)
        for _ in 0..<(total >> 20) { try client.socket.send(piece) }
        let response = try client.reader.readResponse()
        #expect(response.text == "received \(total)")
        let peak = (server.memory("VmHWM") - before) / 1024
        #expect(peak < 48, "peak RSS grew \(peak) MiB for a \(total >> 20) MiB upload")
        print("resources: upload \(total >> 20) MiB, peak RSS \(before / 1024) -> \(server.memory("VmHWM") / 1024) MiB")
    }
}
