import HTTP2
import Testing

/// The face against itself: a client's preface, SETTINGS and a request as bytes (HPACK literal
/// fields), read by a server session that answers through its delegate.
@Suite("HTTP/2 server session")
struct HTTP2ServerSessionTests {
    final class Recorder: HTTP2SessionDelegate {
        var headers: [(String, String)] = []
        var ended: [Int32] = []
        var bodies: [Int32: [UInt8]] = [:]
        var closed: [Int32: HTTP2ErrorCode] = [:]
        var toSend: [UInt8] = Array("hello".utf8)
        func http2(stream: Int32, header name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool {
            headers.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
            return true
        }
        func http2(streamHeadersEnded stream: Int32, endStream: Bool) { if endStream { ended.append(stream) } }
        func http2(stream: Int32, data: UnsafeRawBufferPointer) { bodies[stream, default: []] += data }
        func http2(streamEnded stream: Int32) { ended.append(stream) }
        func http2(streamResponseSent stream: Int32) { responsesSent.append(stream) }
        var responsesSent: [Int32] = []
        func http2(streamClosed stream: Int32, error: HTTP2ErrorCode) { closed[stream] = error }
        func http2(stream: Int32, fill buffer: UnsafeMutableRawBufferPointer) -> HTTP2ServerSession.Fill {
            guard !toSend.isEmpty else { return .end(trailers: [("grpc-status", "0")]) }
            let count = min(buffer.count, toSend.count)
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: toSend.withUnsafeBytes { $0 }[0..<count]))
            toSend.removeFirst(count)
            return .bytes(count)
        }
    }

    static func frame(type: UInt8, flags: UInt8, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(payload.count >> 16), UInt8(payload.count >> 8 & 0xFF), UInt8(payload.count & 0xFF), type, flags]
            + [UInt8(stream >> 24), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)]
            + payload
    }

    /// A literal header field without indexing, new name (RFC 7541 §6.2.2).
    static func literal(_ name: String, _ value: String) -> [UInt8] {
        [0x00, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
    }

    @Test("A GET is read, answered with a body and trailers; the frames the client gets parse back")
    func request() throws {
        let session = try HTTP2ServerSession()
        let recorder = Recorder()
        session.delegate = recorder
        let block =
            Self.literal(":method", "GET") + Self.literal(":scheme", "https") + Self.literal(":authority", "a.example")
            + Self.literal(":path", "/x")
        let input =
            Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + Self.frame(type: 4, flags: 0, stream: 0, [])
            + Self.frame(type: 1, flags: 0x5, stream: 1, block)
        #expect(input.withUnsafeBytes { session.receive($0) })
        #expect(recorder.headers.map(\.0) == [":method", ":scheme", ":authority", ":path"])
        #expect(recorder.ended == [1])
        session.respond(stream: 1, status: 200, headers: [("content-type", "text/plain")], hasBody: true)
        var output: [UInt8] = []
        #expect(session.send { output += $0 })
        // SETTINGS, SETTINGS ack, HEADERS, DATA "hello", DATA end (no END_STREAM), HEADERS trailers.
        var types: [UInt8] = []
        var index = 0
        var data: [UInt8] = []
        while index + 9 <= output.count {
            let length = Int(output[index]) << 16 | Int(output[index + 1]) << 8 | Int(output[index + 2])
            types.append(output[index + 3])
            if output[index + 3] == 0 { data += output[(index + 9)..<(index + 9 + length)] }
            index += 9 + length
        }
        #expect(types.filter { $0 == 1 }.count == 2, "a HEADERS frame for the head and one for the trailers: \(types)")
        #expect(data == Array("hello".utf8))
        #expect(recorder.closed[1] == .noError)
    }

    @Test("Bytes that are not HTTP/2 end the session")
    func garbage() throws {
        let session = try HTTP2ServerSession()
        #expect(!Array("GET / HTTP/1.1\r\n\r\n".utf8).withUnsafeBytes { session.receive($0) })
    }
}

@Suite("HTTP/2 error codes")
struct HTTP2ErrorCodeTests {
    @Test("Codes read from the wire name the RFC 9113 errors and go back as the same numbers; unknown ones are kept")
    func roundTrip() {
        #expect(HTTP2ErrorCode(0) == .noError)
        #expect(HTTP2ErrorCode(2) == .internalError)
        #expect(HTTP2ErrorCode(8) == .cancel)
        #expect(HTTP2ErrorCode(11) == .enhanceYourCalm)
        #expect(HTTP2ErrorCode(13) == .http11Required)
        #expect(HTTP2ErrorCode(0x1234) == .other(0x1234))
        for code in UInt32(0)...14 { #expect(HTTP2ErrorCode(code).code == code) }
    }
}
