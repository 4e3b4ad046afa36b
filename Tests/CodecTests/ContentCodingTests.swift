import Testing

@testable import Codec

@Suite struct ContentCodingTests {
    static let sample: [UInt8] = Array(
        String(repeating: "{\"a\":null,\"b\":[1,2,3],\"c\":\"text\"}\n", count: 500).utf8)

    @Test(arguments: ContentCoding.allCases)
    func roundTrip(coding: ContentCoding) throws {
        let encoded = coding.encode(Self.sample)
        #expect(encoded.count < Self.sample.count)
        #expect(try coding.decode(encoded, limit: 1 << 20) == Self.sample)
    }

    @Test(arguments: ContentCoding.allCases)
    func limitIsEnforced(coding: ContentCoding) {
        let encoded = coding.encode(Self.sample)
        #expect(throws: CodecError.tooLarge(limit: 1000)) { try coding.decode(encoded, limit: 1000) }
    }

    @Test(arguments: ContentCoding.allCases)
    func truncatedAndCorruptDataFail(coding: ContentCoding) {
        let encoded = coding.encode(Self.sample)
        let truncated = Array(encoded.prefix(encoded.count / 2))
        #expect(throws: CodecError.self) { try coding.decode(truncated, limit: 1 << 20) }
        var corrupt = encoded
        for index in stride(from: 2, to: corrupt.count, by: 7) { corrupt[index] ^= 0x5A }
        #expect(throws: CodecError.self) { try coding.decode(corrupt, limit: 1 << 20) }
        #expect(throws: CodecError.self) { try coding.decode([UInt8](), limit: 1 << 20) }
    }

    @Test func rawDeflateAndConcatenatedGzipMembers() throws {
        // Raw deflate (no zlib header): what some servers send as "deflate".
        let zlib = ContentCoding.deflate.encode(Self.sample)
        #expect(try ContentCoding.deflate.decode(zlib, limit: 1 << 20) == Self.sample)
        let members = ContentCoding.gzip.encode(Array("abc".utf8)) + ContentCoding.gzip.encode(Array("def".utf8))
        #expect(try ContentCoding.gzip.decode(members, limit: 100) == Array("abcdef".utf8))
        // Bytes after a whole member that are not another one (servers' padding): ignored, as
        // gzip(1) and browsers ignore them; a member cut short after the first is still an error.
        #expect(try ContentCoding.gzip.decode(members + [0, 0, 0, 0], limit: 100) == Array("abcdef".utf8))
        #expect(try ContentCoding.gzip.decode(members + Array("junk\n".utf8), limit: 100) == Array("abcdef".utf8))
        let second = ContentCoding.gzip.encode(Self.sample)
        let cut = ContentCoding.gzip.encode(Array("abc".utf8)) + second.prefix(second.count / 2)
        #expect(throws: CodecError.self) { try ContentCoding.gzip.decode(cut, limit: 1 << 20) }
    }

    @Test func tokens() {
        #expect(ContentCoding(token: "GZIP") == .gzip)
        #expect(ContentCoding(token: "x-gzip") == .gzip)
        #expect(ContentCoding(token: "br") == .brotli)
        #expect(ContentCoding(token: "deflate") == .deflate)
        #expect(ContentCoding(token: "zstd") == nil)
    }
}
