import Testing

@testable import Sluice

/// A rule's JSON transform as a delivery stage: the body held to its end, then delivered stripped
/// with a new head, or untouched with the reason.
@Suite("TransformStage: null stripping on the way to the client")
struct TransformStageTests {
    static func head(length: Int) -> ResponseHead {
        ResponseHead(
            status: 200,
            headers: HTTPFields([
                ("Content-Type", "application/json"), ("Content-Length", String(length)), ("ETag", "\"v1\""),
            ]))
    }

    static func chain(
        limit: Int = 1024, listsPaths: Bool = false
    ) -> (DeliveryChain<ResponseHead>, RecordingSink<ResponseHead>) {
        let stage = TransformStage(JSONTransform(strip: .members)!, limit: limit, coding: nil, listsPaths: listsPaths)
        let sink = RecordingSink<ResponseHead>()
        return (DeliveryChain<ResponseHead>([stage], sink: sink), sink)
    }

    @Test("Nulls are stripped at the end: the note, then a head with the new length and a weak ETag, the body, the end")
    func strips() throws {
        let (chain, sink) = Self.chain()
        let original = #"{"a":1,"b":null,"c":[null]}"#
        let stripped = #"{"a":1,"c":[null]}"#
        chain.head(Self.head(length: original.utf8.count))
        #expect(chain.send(#"{"a":1,"b":"#))
        #expect(chain.send(#"null,"c":[null]}"#))
        #expect(sink.events.isEmpty, "nothing, not even the head, before the end")
        chain.end()
        #expect(
            sink.events == [
                "transformed: stripped 1 null(s); stripped=true; paths=", "head", "body offer [\(stripped)]", "end",
            ])
        let head = try #require(sink.heads.first)
        #expect(head.status == 200)
        #expect(head.headers.values("content-length") == [String(stripped.utf8.count)])
        #expect(head.headers["etag"] == "W/\"v1\"")
        #expect(head.headers["content-type"] == "application/json")
        #expect(sink.body == Array(stripped.utf8))
    }

    @Test("With paths wanted, the note lists the removed members")
    func listsPaths() {
        let (chain, sink) = Self.chain(listsPaths: true)
        let original = #"{"a":null,"b":{"c":null},"d":[null]}"#
        chain.head(Self.head(length: original.utf8.count))
        #expect(chain.send(original))
        chain.end()
        #expect(sink.events.first == "transformed: stripped 2 null(s); stripped=true; paths=$.a $.b.c")
        guard case .transformed(_, _, let paths) = sink.notes.first else {
            Issue.record("expected a transformed note, got \(sink.events)")
            return
        }
        #expect(paths == ["$.a", "$.b.c"])
        #expect(sink.body == Array(#"{"b":{},"d":[null]}"#.utf8))
    }

    @Test("Valid JSON without nulls goes on as it came, without a note")
    func nothingToStrip() {
        let (chain, sink) = Self.chain()
        let head = Self.head(length: 7)
        chain.head(head)
        #expect(chain.send(#"{"a":1}"#))
        chain.end()
        #expect(sink.heads == [head])
        #expect(sink.events == ["head", #"body offer [{"a":1}]"#, "end"])
    }

    @Test("Invalid JSON goes on untouched, with the reason")
    func invalid() {
        let (chain, sink) = Self.chain()
        let body = #"{"a":null"#
        let head = Self.head(length: body.utf8.count)
        chain.head(head)
        #expect(chain.send(body))
        chain.end()
        #expect(sink.events.count == 4)
        #expect(sink.events[0].hasPrefix("untouched: the body is not valid JSON (byte "), "\(sink.events)")
        #expect(sink.events[1...] == ["head", "body offer [\(body)]", "end"])
        #expect(sink.heads == [head], "the origin's head, length and ETag unchanged")
    }

    @Test(
        "Past the limit: untouched and why, the head and the held bytes offered (a full client keeps the piece waiting behind them), then the rest streams"
    )
    func pastLimit() {
        let (chain, sink) = Self.chain(limit: 8)
        let head = Self.head(length: 16)
        chain.head(head)
        #expect(chain.send(#"{"a":"#))
        #expect(sink.events.isEmpty)
        sink.refusesOffers = true
        #expect(!chain.send(#"null,"#), "5 + 5 > 8: the held bytes are offered; the client is full: the piece waits")
        #expect(!chain.send(#"null,"#), "offered again, the client still full: nothing overtakes the held bytes")
        sink.refusesOffers = false
        #expect(chain.drained(), "the client drained: the held bytes go")
        #expect(chain.send(#"null,"#))
        #expect(chain.send(#""b":1}"#))
        chain.end()
        #expect(
            sink.events == [
                "untouched: the body is larger than max_transform_body (8 bytes)", "head",
                #"body offer [{"a":]"#, "body offer [null,]", #"body offer ["b":1}]"#, "end",
            ])
        #expect(sink.heads == [head])
        #expect(sink.body == Array(#"{"a":null,"b":1}"#.utf8))
    }

    @Test("Abandoned: what was held is dropped and the stage passes what follows straight on")
    func abandon() {
        let (chain, sink) = Self.chain()
        chain.head(Self.head(length: 10))
        #expect(chain.send(#"{"a":null}"#))
        chain.abandon()
        chain.end()
        #expect(sink.events == ["end"], "the held head and body are gone")
    }
}
