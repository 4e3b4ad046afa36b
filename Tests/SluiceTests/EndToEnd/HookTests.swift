import Foundation
import Sluice
import SluiceTestKit
import Synchronization
import Testing

/// Records what a monitor saw (shared between the loop thread and the test).
final class Recorder: Sendable {
    let events = Mutex<[String]>([])
    func add(_ event: String) { events.withLock { $0.append(event) } }
    var all: [String] { events.withLock { $0 } }
}

final class RecordingMonitor: EventMonitor {
    let recorder: Recorder
    init(_ recorder: Recorder) { self.recorder = recorder }
    func taskDidStart(_ task: UpstreamTask) { recorder.add("start \(task.originalRequest.url.pathAndQuery)") }
    func task(_ task: UpstreamTask, didReceive response: ResponseHead) { recorder.add("head \(response.status)") }
    func task(_ task: UpstreamTask, didDecideCaching proposal: CachedResponseProposal?) {
        recorder.add(proposal.map { "cache \($0.bodyBytes)" } ?? "cache none")
    }
    func task(_ task: UpstreamTask, didCompleteWith error: SluiceError?) {
        recorder.add(error == nil ? "complete" : "failed")
    }
    func exchangeDidComplete(_ record: ExchangeRecord) { recorder.add("exchange \(record.status)") }
}

@Suite("Session hooks and event monitors")
struct HookTests {
    @Test("Monitors see start, head, the will-cache decision, completion and the exchange, in order")
    func monitorSequence() throws {
        let origin = try OriginServer { _ in .text("12345") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let recorder = Recorder()
        proxy.onLoop { server in server.session.eventMonitor.add(RecordingMonitor(recorder)) }
        let client = try RawClient(port: proxy.port)
        _ = try client.request(RawClient.get(origin.url("/seq")))
        _ = proxy.waitUntil { recorder.all.count >= 5 }
        #expect(recorder.all == ["start /seq", "head 200", "cache 5", "complete", "exchange 200"])
    }

    @Test("A will-cache handler that refuses is consulted and its answer is reported")
    func willCacheHook() throws {
        let origin = try OriginServer { _ in .text("abc") }
        defer { origin.stop() }
        let proxy = try ProxyHarness(hooks: UpstreamTask.Hooks(cachedResponseHandler: ResponseCacher.doNotCache))
        let recorder = Recorder()
        proxy.onLoop { server in server.session.eventMonitor.add(RecordingMonitor(recorder)) }
        let client = try RawClient(port: proxy.port)
        #expect(try client.request(RawClient.get(origin.url("/c"))).text == "abc")
        _ = proxy.waitUntil { recorder.all.contains("exchange 200") }
        #expect(recorder.all.contains("cache none"))
    }

    @Test("The will-cache hook decides what is stored: doNotCache keeps nothing, modify changes fields and lifetime")
    func willCacheDecidesStorage() throws {
        let origin = try OriginServer { _ in
            .respond(
                status: 200, headers: [("Content-Type", "text/plain"), ("Cache-Control", "max-age=60")],
                body: Array("abc".utf8))
        }
        defer { origin.stop() }
        let refusing = try ProxyHarness(hooks: UpstreamTask.Hooks(cachedResponseHandler: ResponseCacher.doNotCache))
        let first = try RawClient(port: refusing.port)
        _ = try first.request(RawClient.get(origin.url("/r")))
        let again = try first.request(RawClient.get(origin.url("/r")))
        #expect(again.header("cache-status") == "Sluice; fwd=uri-miss; stored")  // admitted, then refused at the end
        #expect(refusing.stats.cacheStores == 0)
        #expect(refusing.stats.cacheHits == 0)

        let changing = ResponseCacher(
            behavior: .modify { _, proposal in
                var changed = proposal
                changed.response.headers.set("X-Stored-By", "hook")
                changed.lifetime = 5
                return changed
            })
        let proxy = try ProxyHarness(hooks: UpstreamTask.Hooks(cachedResponseHandler: changing))
        let clock = TestClock()
        clock.install(on: proxy)
        let client = try RawClient(port: proxy.port)
        #expect(try client.request(RawClient.get(origin.url("/m"))).header("x-stored-by") == nil)
        let hit = try client.request(RawClient.get(origin.url("/m")))
        #expect(hit.header("x-stored-by") == "hook")
        #expect(hit.header("cache-status") == "Sluice; hit; ttl=5; detail=ttl-override")
        clock.advance(6)
        #expect(
            try client.request(RawClient.get(origin.url("/m"))).header("cache-status")?.contains("fwd=stale") == true)
    }

    @Test("A response handler that cancels at the headers stops the body and answers 502")
    func responseHandlerCancels() throws {
        let origin = try OriginServer { _ in
            .stream(status: 200, headers: [("Content-Type", "text/html")], total: 32 * 1024 * 1024)
        }
        defer { origin.stop() }
        let gate = ResponseGate(
            behavior: .decide { head in
                head.headers["content-type"] == "text/html"
                    ? .cancel(.upstreamFailed(reason: .cancelled(detail: "text/html is not acceptable"))) : .allow
            })
        let proxy = try ProxyHarness(hooks: UpstreamTask.Hooks(responseHandler: gate))
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/page")))
        #expect(response.status == 502)
        #expect(ErrorTests.problemType(response) == "upstream-cancelled")
        #expect(response.text.contains("text/html is not acceptable"))
    }
}
