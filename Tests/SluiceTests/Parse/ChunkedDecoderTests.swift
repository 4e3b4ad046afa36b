import Sluice
import Testing

@Suite("ChunkedDecoder")
struct ChunkedDecoderTests {
    /// Decodes `text` fed in pieces of `step` bytes into an output of `room` bytes per call.
    static func decode(
        _ text: String, step: Int = .max, room: Int = 1 << 16, maxBody: Int64 = .max, lenient: Bool = false
    ) throws -> (String, Bool) {
        var decoder = ChunkedDecoder(maxBodyBytes: maxBody, allowsBlankAfterSize: lenient)
        let input = Array(text.utf8)
        var output: [UInt8] = []
        var offset = 0
        var scratch = [UInt8](repeating: 0, count: room)
        while offset < input.count, !decoder.isFinished {
            let end = min(input.count, offset + step)
            let piece = Array(input[offset..<end])
            var used = 0
            while used < piece.count, !decoder.isFinished {
                let result = try piece[used...].withUnsafeBytes { inputBytes in
                    try scratch.withUnsafeMutableBytes { try decoder.decode(inputBytes, into: $0) }
                }
                output += scratch[0..<result.produced]
                used += result.consumed
                if result.consumed == 0 && result.produced == 0 { break }
            }
            offset += used
        }
        return (String(decoding: output, as: UTF8.self), decoder.isFinished)
    }

    @Test("Chunks, extensions and trailers decode to the body, in any piece size and output room")
    func decodesInPieces() throws {
        let text = "4;name=value\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nExpires: never\r\n\r\n"
        for step in [1, 2, 3, 7, 1000] {
            for room in [1, 3, 64] {
                let (body, finished) = try Self.decode(text, step: step, room: room)
                #expect(body == "Wikipedia in\r\n\r\nchunks.")
                #expect(finished)
            }
        }
    }

    @Test(
        "Bad framing is rejected",
        arguments: [
            "zz\r\nhello\r\n0\r\n\r\n", "5\r\nhelloX\r\n0\r\n\r\n", "5\nhello\r\n0\r\n\r\n", "5\r\nhello\n0\r\n\r\n",
            "12345678901234567\r\n", "-1\r\n", "\r\n", "5;\u{0}\r\nhello\r\n", "0\r\n bad-trailer\r\n\r\n",
            "0\r\nX: y\n\r\n",
            "0\r\n\rX", "4 \r\nWiki\r\n0\r\n\r\n", "0\t\r\n\r\n",
        ])
    func rejects(text: String) {
        #expect(throws: SluiceError.self) { _ = try Self.decode(text) }
    }

    @Test("Whitespace after a size goes before an extension; an origin's alone is read as browsers read it")
    func blankAfterSize() throws {
        for step in [1, 1000] {
            #expect(try Self.decode("4 ;a=b\r\nWiki\r\n0 \t;c\r\n\r\n", step: step) == ("Wiki", true))
            #expect(try Self.decode("4 \r\nWiki\r\n0\t\r\n\r\n", step: step, lenient: true) == ("Wiki", true))
        }
    }

    @Test("The body limit is enforced across chunks")
    func bodyLimit() {
        #expect(throws: SluiceError.badRequest(reason: .bodyTooLarge(limit: 8))) {
            _ = try Self.decode("5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n", maxBody: 8)
        }
    }

    @Test("Random chunkings of random bodies round-trip (property)")
    func roundTrip() throws {
        for _ in 0..<200 {
            let body = String((0..<Int.random(in: 0..<300)).map { _ in "abcdef\r\n0123".randomElement()! })
            let bytes = Array(body.utf8)
            var encoded: [UInt8] = []
            var offset = 0
            while offset < bytes.count {
                let size = min(bytes.count - offset, Int.random(in: 1...40))
                encoded += Array((String(size, radix: 16, uppercase: Bool.random()) + "\r\n").utf8)
                encoded += bytes[offset..<(offset + size)] + [13, 10]
                offset += size
            }
            encoded += Array("0\r\n\r\n".utf8)
            let text = String(decoding: encoded, as: UTF8.self)
            let (decoded, finished) = try Self.decode(text, step: Int.random(in: 1...17), room: Int.random(in: 1...33))
            #expect(decoded == body)
            #expect(finished)
        }
    }
}
