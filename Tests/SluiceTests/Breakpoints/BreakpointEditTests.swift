import Codec
import Testing

@testable import Sluice

/// A paused response's fields edited without its body: the body goes out as the fields describe it.
@Suite("Response edits and content codings")
struct BreakpointEditTests {
    static let json = Array(#"{"id":7,"name":"Rex"}"#.utf8)

    static func held(_ fields: [(String, String)], body: [UInt8]) -> HeldResponse {
        var held = HeldResponse(ResponseHead(status: 200, headers: HTTPFields(fields)), limit: 1 << 20)
        _ = body.withUnsafeBytes { held.append($0) }
        return held
    }

    static func edit(_ fields: [(String, String)]) -> PausedMessage {
        var edit = PausedMessage()
        edit.headers = fields
        return edit
    }

    @Test("Content-Encoding taken off: the body shown (decoded) goes, its ETag weak; changed to br: encoded afresh")
    func codingTakenOffOrChanged() throws {
        let held = Self.held(
            [("Content-Type", "application/json"), ("Content-Encoding", "gzip"), ("ETag", "\"v1\"")],
            body: ContentCoding.gzip.encode(Self.json))
        let (plain, plainBody) = BreakpointStage.edited(
            held, with: Self.edit([("Content-Type", "application/json"), ("ETag", "\"v1\"")]), replacing: false)
        #expect(plainBody == Self.json)
        #expect(plain.headers[.contentEncoding] == nil && plain.headers[.etag] == "W/\"v1\"")
        #expect(plain.headers[.contentLength] == String(Self.json.count))
        let (brotli, brotliBody) = BreakpointStage.edited(
            held, with: Self.edit([("Content-Type", "application/json"), ("Content-Encoding", "br")]), replacing: false)
        #expect(brotli.headers[.contentEncoding] == "br")
        #expect(try ContentCoding.brotli.decode(brotliBody, limit: 1 << 20) == Self.json)
        // A coding Sluice cannot write: the original's stays, with its bytes.
        let (kept, keptBody) = BreakpointStage.edited(
            held, with: Self.edit([("Content-Encoding", "zstd")]), replacing: false)
        #expect(kept.headers[.contentEncoding] == "gzip" && keptBody == held.bytes)
    }

    @Test("A coding added to a plain body encodes it; fields edited with the coding kept leave the bytes alone")
    func codingAddedOrKept() throws {
        let plain = Self.held([("Content-Type", "application/json")], body: Self.json)
        let (gzip, gzipBody) = BreakpointStage.edited(
            plain, with: Self.edit([("Content-Type", "application/json"), ("Content-Encoding", "gzip")]),
            replacing: false)
        #expect(gzip.headers[.contentEncoding] == "gzip")
        #expect(try ContentCoding.gzip.decode(gzipBody, limit: 1 << 20) == Self.json)
        let coded = Self.held(
            [("Content-Encoding", "gzip"), ("ETag", "\"v1\"")], body: ContentCoding.gzip.encode(Self.json))
        let (same, sameBody) = BreakpointStage.edited(
            coded, with: Self.edit([("Content-Encoding", "gzip"), ("ETag", "\"v1\""), ("X-Seen", "1")]),
            replacing: false)
        #expect(sameBody == coded.bytes && same.headers[.etag] == "\"v1\"" && same.headers["X-Seen"] == "1")
        // A coding Sluice does not write, on a plain body: the person's label goes as written.
        let (custom, customBody) = BreakpointStage.edited(
            plain, with: Self.edit([("Content-Type", "application/json"), ("Content-Encoding", "x-custom")]),
            replacing: false)
        #expect(custom.headers[.contentEncoding] == "x-custom" && customBody == Self.json)
    }

    @Test("A request's fields edited with its body left alone follow the same coding rules as a response's")
    func requestCodings() throws {
        var upstream = UpstreamRequest(
            method: "POST", url: TargetURL("http://a.example/o")!,
            headers: HTTPFields([("Content-Type", "application/json")]), body: .length(Int64(Self.json.count)))
        // A coding added to a plain body encodes it.
        let edit = Self.edit([("Content-Type", "application/json"), ("Content-Encoding", "gzip")])
        let sent = try Exchange.apply(edit, to: &upstream, body: Self.json).get()
        #expect(upstream.headers[.contentEncoding] == "gzip")
        #expect(try ContentCoding.gzip.decode(sent, limit: 1 << 20) == Self.json)
    }
}
