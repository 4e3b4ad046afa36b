import Curl
import EventIO
import Foundation
import SluiceTestKit
import Testing

/// Collects one transfer's callbacks.
final class Collector: EasyHandleDelegate, MultiHandleDelegate {
    var headerLines: [String] = []
    var body: [UInt8] = []
    var completed: [CurlError?] = []
    var pauseEvery = false
    var paused = 0
    var refuse = false
    let loop: EventLoop
    weak var handle: EasyHandle?

    init(loop: EventLoop) { self.loop = loop }

    func easyHandle(_ handle: EasyHandle, didReceiveHeaderLine line: UnsafeRawBufferPointer) -> EasyHandle.Action {
        headerLines.append(String(decoding: line, as: UTF8.self))
        return .proceed
    }

    func easyHandle(_ handle: EasyHandle, didReceiveBody bytes: UnsafeRawBufferPointer) -> EasyHandle.Action {
        if pauseEvery, paused < 3 {
            paused += 1
            loop.callSoon { handle.unpause() }
            return .pause
        }
        body += bytes
        return .proceed
    }

    func easyHandle(_ handle: EasyHandle, fillUploadBuffer buffer: UnsafeMutableRawBufferPointer)
        -> EasyHandle.UploadResult
    { .end }

    func easyHandle(_ handle: EasyHandle, mayConnectTo address: SocketAddress) -> Bool { !refuse }

    func multiHandle(_ multi: MultiHandle, didComplete handle: EasyHandle, error: CurlError?) {
        completed.append(error)
        loop.stop()
    }
}

@Suite("Curl: easy and multi handles on the event loop")
struct MultiHandleTests {
    static func fetch(_ url: String, configure: (Collector) -> Void = { _ in }) throws -> (
        Collector, EasyHandle, MultiHandle
    ) {
        let loop = try EventLoop()
        let multi = MultiHandle(loop: loop)
        let collector = Collector(loop: loop)
        configure(collector)
        multi.delegate = collector
        let handle = EasyHandle()
        handle.delegate = collector
        handle.setURL(url)
        handle.setMethod("GET", body: .none)
        try multi.add(handle)
        let guardTimer = Timer(loop: loop) { loop.stop() }
        guardTimer.schedule(milliseconds: 10_000)
        loop.run()
        return (collector, handle, multi)
    }

    @Test("A transfer delivers the status line, header lines, the blank line and the body")
    func transfer() throws {
        let origin = try OriginServer { _ in .text("curl body", headers: [("X-Test", "1")]) }
        defer { origin.stop() }
        let (collector, handle, _) = try Self.fetch(origin.url("/t"))
        #expect(collector.completed.count == 1)
        #expect(collector.completed.first! == nil)
        #expect(collector.headerLines.first == "HTTP/1.1 200 OK\r\n")
        #expect(collector.headerLines.contains("X-Test: 1\r\n"))
        #expect(collector.headerLines.last == "\r\n")
        #expect(String(decoding: collector.body, as: UTF8.self) == "curl body")
        #expect(handle.responseCode == 200)
        #expect(origin.requests.first?.header("accept") == "*/*")
    }

    @Test("Pausing from the body callback and unpausing later loses no bytes")
    func pauseResume() throws {
        let origin = try OriginServer { _ in .stream(status: 200, headers: [], total: 1_000_000) }
        defer { origin.stop() }
        let (collector, _, _) = try Self.fetch(origin.url("/p")) { $0.pauseEvery = true }
        #expect(collector.paused == 3)
        #expect(collector.body.count == 1_000_000)
        #expect(collector.body[999_999] == UInt8(999_999 % (256 * 1024) % 251))
    }

    @Test("A refused address fails the transfer as a connect error; no proxy from the environment is used")
    func connectionFilter() throws {
        let origin = try OriginServer { _ in .text("never") }
        defer { origin.stop() }
        setenv("http_proxy", "http://127.0.0.1:1", 1)
        defer { unsetenv("http_proxy") }
        let (refused, _, _) = try Self.fetch(origin.url("/r")) { $0.refuse = true }
        #expect(refused.completed.first??.kind == .connect)
        let (allowed, _, _) = try Self.fetch(origin.url("/r"))
        #expect(allowed.completed.first! == nil)
        #expect(origin.requests.count == 1)
    }
}
