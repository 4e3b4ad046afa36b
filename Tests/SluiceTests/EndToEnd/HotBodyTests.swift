import Foundation
import SluiceTestKit
import Testing

@testable import Sluice

/// Hits from the memory tier: bodies of 16 KiB and more kept as shared in-memory files that the
/// kernel sends from its own pages (zero-copy hits), smaller ones as bytes; every way a body can
/// leave (keep-alive, pipelined to a client that reads late, ranges, HEAD) gives the same bytes.
@Suite("Hot bodies")
struct HotBodyTests {
    static let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 251) }

    static func origin() throws -> OriginServer {
        try OriginServer { request in
            .respond(
                status: 200,
                headers: [("Cache-Control", "max-age=600"), ("Content-Type", "application/octet-stream")],
                body: request.target == "/small" ? Array(body[0..<1000]) : body)
        }
    }

    /// How the memory tier keeps the body of `url`'s entry: "file", "bytes" or "none".
    static func kept(_ proxy: ProxyHarness, _ url: String) -> String {
        proxy.onLoop { server in
            guard let tiers = server.tiers, let entry = tiers.file.candidates(key: url).first else {
                return "none"
            }
            switch tiers.memory.body(entry.ref) {
            case .file?: return "file"
            case .bytes?: return "bytes"
            case nil: return "none"
            }
        }
    }

    @Test("A large hot body is kept as a file and every hit is byte-identical: keep-alive, pipelined, late reader")
    func fileHits() throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let url = origin.url("/file")
        #expect(try client.request(RawClient.get(url)).body == Self.body)
        #expect(try client.request(RawClient.get(url)).body == Self.body)
        #expect(Self.kept(proxy, url) == "file")
        _ = try client.request(RawClient.get(origin.url("/small")))
        _ = try client.request(RawClient.get(origin.url("/small")))
        #expect(Self.kept(proxy, origin.url("/small")) == "bytes")
        for _ in 0..<20 {
            let hit = try client.request(RawClient.get(url))
            #expect(hit.status == 200 && hit.body == Self.body)
            #expect(hit.header("content-length") == String(Self.body.count))
        }
        // Five pipelined hits to a client that reads nothing for a while: the socket fills, the
        // rest waits in the output queue as a part of the file, and all of it arrives in order.
        let late = try RawClient(port: proxy.port)
        try late.send(String(repeating: RawClient.get(url), count: 5))
        // The proxy serves hits until the socket is full, then waits: the count stops moving.
        #expect(settled { proxy.stats.cacheHits } != nil)
        for _ in 0..<5 {
            let hit = try late.reader.readResponse(method: "GET")
            #expect(hit.status == 200 && hit.body == Self.body)
        }
        #expect(origin.requests.count == 2)
    }

    @Test("Ranges and HEAD of a body kept as a file")
    func fileRangesAndHead() throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let url = origin.url("/file")
        _ = try client.request(RawClient.get(url))
        _ = try client.request(RawClient.get(url))
        #expect(Self.kept(proxy, url) == "file")
        for (range, first, last) in [
            ("100000-200000", 100_000, 200_000), ("-10", 299_990, 299_999), ("0-0", 0, 0),
            ("299000-", 299_000, 299_999),
        ] {
            let part = try client.request(RawClient.get(url, extra: "Range: bytes=\(range)\r\n"))
            #expect(part.status == 206)
            #expect(part.body == Array(Self.body[first...last]), "\(range)")
        }
        let head = try client.request(
            "HEAD \(url) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n", method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty && head.header("content-length") == String(Self.body.count))
        // The connection is still in step: a full hit follows.
        #expect(try client.request(RawClient.get(url)).body == Self.body)
        #expect(origin.requests.count == 1)
    }
}
