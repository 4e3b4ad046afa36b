import Testing

@testable import Sluice

@Suite("Byte ranges from stored responses")
struct ByteRangeTests {
    static let stored = HTTPFields([
        ("ETag", "\"v1\""), ("Date", "Thu, 18 Aug 2050 02:01:18 GMT"),
        ("Last-Modified", "Wed, 17 Aug 2050 02:01:18 GMT"),
    ])

    static func answer(_ range: String?, ifRange: String? = nil, size: Int64 = 1000) -> ByteRange.Answer {
        var request = HTTPFields()
        if let range { request.append(name: "Range", value: range) }
        if let ifRange { request.append(name: "If-Range", value: ifRange) }
        return ByteRange.answer(request, stored: stored, size: size)
    }

    @Test(
        "Range: first-last, open-ended, suffix; clamped to the length; past the end is 416; bad or several is whole",
        arguments: [
            ("bytes=0-99", ByteRange.Answer.partial(0...99)),
            ("bytes=990-2000", .partial(990...999)),
            ("bytes=900-", .partial(900...999)),
            ("bytes=-100", .partial(900...999)),
            ("bytes=-5000", .partial(0...999)),
            ("BYTES=5-5", .partial(5...5)),
            (" bytes=1-2 ", .partial(1...2)),
            ("bytes=1-2,", .partial(1...2)),
            ("bytes=1000-", .unsatisfiable),
            ("bytes=1000-1001", .unsatisfiable),
            ("bytes=-0", .unsatisfiable),
            ("bytes=5-1", .whole),
            ("bytes=0-1,5-6", .whole),
            ("bytes=a-1", .whole),
            ("bytes=1", .whole),
            ("items=0-1", .whole),
            ("bytes=", .whole),
            ("bytes=--1", .whole),
            ("bytes=99999999999999999999-", .whole),
        ])
    func ranges(range: String, expected: ByteRange.Answer) {
        #expect(Self.answer(range) == expected)
    }

    @Test("An empty representation has no byte to give")
    func emptyBody() {
        #expect(Self.answer("bytes=0-", size: 0) == .unsatisfiable)
        #expect(Self.answer("bytes=-1", size: 0) == .unsatisfiable)
        #expect(Self.answer(nil) == .whole)
    }

    @Test("If-Range: a strong ETag or the exact strong Last-Modified gives the range; anything else the whole")
    func ifRange() {
        #expect(Self.answer("bytes=0-9", ifRange: "\"v1\"") == .partial(0...9))
        #expect(Self.answer("bytes=0-9", ifRange: "\"v2\"") == .whole)
        #expect(Self.answer("bytes=0-9", ifRange: "W/\"v1\"") == .whole)
        #expect(Self.answer("bytes=0-9", ifRange: "Wed, 17 Aug 2050 02:01:18 GMT") == .partial(0...9))
        #expect(Self.answer("bytes=0-9", ifRange: "Wed, 17 Aug 2050 02:01:19 GMT") == .whole)
        #expect(Self.answer("bytes=0-9", ifRange: "yesterday") == .whole)
        // A Last-Modified within a second of Date is weak: never matches.
        let weak = HTTPFields([
            ("Date", "Thu, 18 Aug 2050 02:01:18 GMT"), ("Last-Modified", "Thu, 18 Aug 2050 02:01:18 GMT"),
        ])
        var request = HTTPFields([("Range", "bytes=0-9")])
        request.append(name: "If-Range", value: "Thu, 18 Aug 2050 02:01:18 GMT")
        #expect(ByteRange.answer(request, stored: weak, size: 100) == .whole)
        // A weak stored ETag never matches either.
        request = HTTPFields([("Range", "bytes=0-9"), ("If-Range", "W/\"x\"")])
        #expect(ByteRange.answer(request, stored: HTTPFields([("ETag", "W/\"x\"")]), size: 100) == .whole)
    }

    @Test("The 206 head says which bytes of how many; the 416 head says how many")
    func heads() {
        let head = ResponseHead(
            status: 200,
            headers: HTTPFields([("Content-Length", "1000"), ("Content-Type", "text/plain"), ("ETag", "\"v1\"")]))
        let partial = ByteRange.partialHead(head, bytes: 10...19, size: 1000)
        #expect(partial.status == 206)
        #expect(partial.headers["content-range"] == "bytes 10-19/1000")
        #expect(partial.headers["content-length"] == "10")
        #expect(partial.headers["content-type"] == "text/plain")
        let unsatisfiable = ByteRange.unsatisfiableHead(head, size: 1000)
        #expect(unsatisfiable.status == 416)
        #expect(unsatisfiable.headers["content-range"] == "bytes */1000")
        #expect(unsatisfiable.headers["content-length"] == "0")
        #expect(unsatisfiable.headers["etag"] == "\"v1\"")
        #expect(unsatisfiable.headers["content-type"] == nil)
    }

    @Test("A stored piece: Content-Range parsed strictly; it answers only ranges it holds whole")
    func pieces() {
        func piece(_ range: String, length: String? = nil) -> ByteRange.Piece? {
            var fields = HTTPFields([("Content-Range", range)])
            if let length { fields.append(name: "Content-Length", value: length) }
            return ByteRange.Piece(fields)
        }
        #expect(piece("bytes 4-9/10") == ByteRange.Piece(first: 4, last: 9, complete: 10))
        #expect(piece("BYTES 0-0/1", length: "1") == ByteRange.Piece(first: 0, last: 0, complete: 1))
        for bad in ["bytes 4-9/*", "bytes */10", "bytes 9-4/10", "bytes 4-10/10", "bytes=4-9/10", "bytes 4-9", ""] {
            #expect(piece(bad) == nil, "\(bad)")
        }
        #expect(piece("bytes 4-9/10", length: "5") == nil)  // the body must be the bytes it names

        let held = ByteRange.Piece(first: 100, last: 199, complete: 1000)
        func answer(_ range: String, ifRange: String? = nil) -> ByteRange.Answer? {
            var request = HTTPFields([("Range", range)])
            if let ifRange { request.append(name: "If-Range", value: ifRange) }
            return ByteRange.answer(request, piece: held, stored: Self.stored)
        }
        #expect(answer("bytes=100-199") == .partial(100...199))
        #expect(answer("bytes=150-160") == .partial(150...160))
        #expect(answer("bytes=150-160", ifRange: "\"v1\"") == .partial(150...160))
        #expect(answer("bytes=150-160", ifRange: "\"v0\"") == nil)
        #expect(answer("bytes=99-150") == nil)  // a byte it lacks
        #expect(answer("bytes=150-") == nil)  // to the end: 150-999
        #expect(answer("bytes=-5") == nil)  // the last five: 995-999
        #expect(answer("bytes=1000-") == .unsatisfiable)
        #expect(answer("bytes=100-110,120-130") == nil)
    }

    @Test("Combining: pieces of one representation that touch or overlap; new bytes win the overlap")
    func combining() {
        func union(_ stored: ClosedRange<Int64>, _ new: ClosedRange<Int64>, complete: Int64 = 100) -> String {
            let result = CacheStore.union(
                stored: .init(first: stored.lowerBound, last: stored.upperBound, complete: complete),
                new: .init(first: new.lowerBound, last: new.upperBound, complete: 100))
            guard case .combined(let all, let parts) = result else { return "replaces" }
            return "\(all): "
                + parts.map { "\($0.source == .new ? "new" : "stored") \($0.bytes)" }.joined(separator: ", ")
        }
        #expect(union(0...9, 10...19) == "0...19: stored 0...9, new 10...19")
        #expect(union(10...19, 0...9) == "0...19: new 0...9, stored 10...19")
        #expect(union(0...49, 20...29) == "0...49: stored 0...19, new 20...29, stored 30...49")
        #expect(union(20...29, 0...49) == "0...49: new 0...49")
        #expect(union(0...9, 11...19) == "replaces")  // a gap
        #expect(union(0...9, 10...19, complete: 200) == "replaces")  // another length
        let strong = HTTPFields([("ETag", "\"a\"")])
        #expect(ByteRange.sameRepresentation(strong, strong))
        #expect(!ByteRange.sameRepresentation(HTTPFields([("ETag", "W/\"a\"")]), HTTPFields([("ETag", "W/\"a\"")])))
        #expect(!ByteRange.sameRepresentation(strong, HTTPFields([("ETag", "\"b\"")])))
        #expect(!ByteRange.sameRepresentation(HTTPFields(), HTTPFields()))
    }
}
