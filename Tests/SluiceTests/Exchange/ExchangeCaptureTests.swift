import Testing

@testable import Sluice

@Suite("What a watched exchange keeps")
struct ExchangeCaptureTests {
    @Test("The first MiB of the body, all of it counted; none when there is no room; the head's fields parsed back")
    func bounds() {
        let capture = ExchangeCapture(
            request: HTTPFields([("Host", "a"), ("X-Big", String(repeating: "v", count: 40_000))]))
        #expect(capture.requestHeaders.count == 1, "header fields beyond 32 KiB are not kept")
        let piece = [UInt8](repeating: 7, count: 700_000)
        piece.withUnsafeBytes { capture.append($0) }
        piece.withUnsafeBytes { capture.append($0) }
        #expect(capture.body.count == ExchangeCapture.bodyLimit && capture.bodyTotal == 1_400_000)
        capture.head(Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-A:  b \r\n\r\n".utf8))
        capture.head(Array("HTTP/1.1 500 Later\r\n\r\n".utf8))
        #expect(capture.responseFields.map { "\($0.0)=\($0.1)" } == ["Content-Type=text/plain", "X-A=b"])

        let headersOnly = ExchangeCapture(request: HTTPFields(), bodyRoom: 0)
        piece.withUnsafeBytes { headersOnly.append($0) }
        #expect(headersOnly.body.isEmpty && headersOnly.bodyTotal == 700_000)
    }
}
