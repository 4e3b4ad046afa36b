import EventIO

/// The few things an exchange needs from its client's byte stream: read the input, write with a
/// "more follows" hint, the size of what is still unsent, and whether writes fail. A plain
/// socket (``Connection``) is one; a decrypted TLS stream is another.
protocol ClientStream: AnyObject {
    /// Bytes received and not yet consumed.
    var inputCount: Int { get }
    /// Runs `body` over the first contiguous piece of the input.
    func withFirstInputSegment<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R
    /// Runs `body` over up to `count` bytes of input made contiguous (a request head being parsed).
    func withInput<R>(upTo count: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R
    /// Consumes `count` bytes of input.
    func drainInput(_ count: Int)
    /// Queues bytes; `more`: more of the same response follows at once (the stream may gather).
    func write(_ bytes: UnsafeRawBufferPointer, more: Bool)
    func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, more: Bool)
    func write(
        _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, _ third: UnsafeRawBufferPointer, more: Bool)
    func write(
        _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, _ third: UnsafeRawBufferPointer,
        _ fourth: UnsafeRawBufferPointer, more: Bool)
    func write(_ bytes: [UInt8])
    func write(_ text: String)
    /// Bytes queued and not yet sent (backpressure: above the high-water mark, the source pauses).
    var outputCount: Int { get }
    /// A write failed (the peer is gone); its error event follows.
    var writeBroken: Bool { get }
    /// Whether ``write(_:file:range:)`` sends a file's bytes without copying them (a plain socket).
    var sendsFiles: Bool { get }
    /// Writes `head`, then bytes `range` of `file`; the end of what is written together.
    func write(_ head: UnsafeRawBufferPointer, file: SharedFile, range: Range<Int>)
    /// A client that takes the response as its parts instead of HTTP/1.1 bytes (an HTTP/2 stream).
    var parts: (any ResponseParts)? { get }
    /// The request body's end arrived (a body framed by its stream's end: ``ProxyRequest/BodyFraming/streamEnd``).
    var inputEnded: Bool { get }
}

/// A client face that takes a response as its head, body pieces and end (an HTTP/2 stream makes
/// HEADERS, DATA and END_STREAM of them); the trailers come through ``ExchangeHost/responseTrailers(_:)``
/// before the end. Its body bytes are the content, never framed.
protocol ResponseParts: AnyObject {
    /// The final head; `hasBody`: content (or trailers) may follow.
    func respond(_ head: ResponseHead, hasBody: Bool)
    /// An interim (1xx) head, before the final one.
    func respondInterim(_ head: ResponseHead)
    func respondBody(_ bytes: UnsafeRawBufferPointer)
    /// The response is complete.
    func respondEnd()
}

extension ClientStream {
    var sendsFiles: Bool { false }
    var parts: (any ResponseParts)? { nil }
    var inputEnded: Bool { false }

    // A stream that neither gathers nor copies differently writes the pieces one by one (a
    // socket and a TLS stream have their own: one `writev`, one TLS record).

    func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, more: Bool) {
        write(first, more: true)
        write(second, more: more)
    }

    func write(
        _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, _ third: UnsafeRawBufferPointer, more: Bool
    ) {
        write(first, second, more: true)
        write(third, more: more)
    }

    func write(
        _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, _ third: UnsafeRawBufferPointer,
        _ fourth: UnsafeRawBufferPointer, more: Bool
    ) {
        write(first, second, more: true)
        write(third, fourth, more: more)
    }

    func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { write($0, more: false) } }

    func write(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0), more: false) }
    }

    /// Any stream: the file's bytes read in place and written like others (copied into the stream).
    func write(_ head: UnsafeRawBufferPointer, file: SharedFile, range: Range<Int>) {
        write(head, UnsafeRawBufferPointer(rebasing: file.bytes[range]), more: false)
    }
}

extension Connection: ClientStream {
    /// The kernel sends a file's pages itself (`sendfile`).
    var sendsFiles: Bool { true }
}

/// What an exchange needs from the client connection that runs it, besides the byte stream.
protocol ExchangeHost: AnyObject {
    /// The client's byte stream.
    var stream: any ClientStream { get }
    /// The client's address, for logs.
    var peerText: String { get }
    /// Whether the client is on this machine.
    var isLocal: Bool { get }
    /// The client sent FIN.
    var inputClosed: Bool { get }
    /// The request body was read to its end.
    func requestBodyDidEnd()
    /// Sends the exchange's held head at the end of this loop turn unless body bytes took it along.
    func sendHeldHeadAtEndOfTurn()
    /// The exchange is over: the next request may start, or the connection closes (`abort`: reset).
    func exchangeDidFinish(_ exchange: Exchange, closeConnection: Bool, abort: Bool)
    /// The origin's trailer fields, before the body's end is written (an HTTP/2 stream sends
    /// them as its trailing HEADERS: gRPC's status).
    func responseTrailers(_ fields: HTTPFields)
    /// The onboarding page gave this client Sluice's CA: it is about to trust it.
    func servedCertificate()
}

extension ExchangeHost {
    /// An HTTP/1.1 client gets the body without them.
    func responseTrailers(_ fields: HTTPFields) {}
    /// (Only a connection of its own knows the client's passthrough windows.)
    func servedCertificate() {}
}
