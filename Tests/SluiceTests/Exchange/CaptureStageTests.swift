import Testing

@testable import Sluice

/// What a watched exchange keeps of the response is what the client was given: the head as
/// written, and only the body bytes the client took.
@Suite("CaptureStage: the response as the client got it")
struct CaptureStageTests {
    @Test("The head bytes are kept; a refused offer is not captured, the same bytes taken later are")
    func keepsWhatWasTaken() {
        let capture = ExchangeCapture(request: HTTPFields([("Host", "a")]))
        let sink = RecordingSink<WireHead>()
        let chain = DeliveryChain<WireHead>([CaptureStage(capture)], sink: sink)
        let head = WireHead.ok(length: 11)
        chain.head(head)
        #expect(capture.responseHead == head.bytes)
        #expect(sink.heads.map(\.bytes) == [head.bytes], "the head goes on unchanged")
        #expect(chain.send("hello"))
        sink.refusesOffers = true
        #expect(!chain.send(" world"))
        #expect(capture.body == Array("hello".utf8) && capture.bodyTotal == 5, "a refused offer is not captured")
        #expect(chain.send(" world", .release))
        sink.refusesOffers = false
        chain.end()
        #expect(capture.body == Array("hello world".utf8))
        #expect(capture.bodyTotal == 11)
        #expect(sink.events == ["head", "body offer [hello]", "body release [ world]", "end"])
        #expect(capture.responseFields.map { "\($0.0)=\($0.1)" } == ["Content-Length=11"])
    }

    @Test("A later head is not kept over the first; a whole answer replaces it, with its body")
    func wholeReplacesHead() {
        let capture = ExchangeCapture(request: HTTPFields())
        let prepared = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n".utf8)
        capture.head(prepared)
        capture.head(Array("HTTP/1.1 204 No Content\r\n\r\n".utf8))
        #expect(capture.responseHead == prepared, "only the first head is kept")
        let problem = Array("HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/problem+json\r\n\r\n".utf8)
        capture.whole(head: problem, body: Array("{}".utf8))
        #expect(capture.responseHead == problem)
        #expect(capture.body == Array("{}".utf8) && capture.bodyTotal == 2)
        #expect(capture.responseFields.map { "\($0.0)=\($0.1)" } == ["Content-Type=application/problem+json"])
    }
}
