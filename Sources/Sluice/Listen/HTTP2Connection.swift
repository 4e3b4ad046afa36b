import EventIO
import HTTP2
import Logging

/// An intercepted connection whose client chose HTTP/2 (ALPN `h2`): the decrypted stream goes
/// through an nghttp2 server session, and every stream is an ordinary ``Exchange`` (rules,
/// validation, stripping, cache, contracts, events, HAR, metrics) through ``HTTP2Stream``.
/// Streams cancelled by the client cancel their exchange; a shutdown sends GOAWAY and lets the
/// streams running finish. Loop-confined.
final class HTTP2Connection {
    unowned let client: ClientConnection
    let tls: TLSStream
    let authority: ClientConnection.Authority
    let env: ClientEnvironment
    let session: HTTP2ServerSession
    var streams: [Int32: HTTP2Stream] = [:]
    /// Whether no stream is running (a client's close_notify then ends the connection; with
    /// streams running, their answers still go out first).
    var isIdle: Bool { streams.isEmpty }
    /// Frames gathered for one TLS write (records of up to 16 KiB, not one per frame).
    private var gather: [UInt8] = []
    private var flushDue = false
    var closing = false
    /// Streams the client reset, recently (rapid reset: CVE-2023-44487): young ones, and all.
    var resets: [UInt64] = []
    var lateResets: [UInt64] = []
    /// Streams whose exchange starts after the current read.
    private var startsDue: [HTTP2Stream] = []
    /// Streams this side reset (not counted as the client's).
    private var resetting: Set<Int32> = []
    /// The last stream a GOAWAY sent accepted: later ones are refused.
    var lastAccepted: Int32?
    /// Looks for streams stalled past `timeouts.client_body`, while any runs.
    var stallTimer: Timer?
    /// When the session last took response bytes of any stream.
    private(set) var movedAt = EventLoop.monotonicNanoseconds()

    var loop: EventLoop { env.exchanges.loop }
    var maxHeaderBytes: Int { env.exchanges.parserLimits.maxHeaderBytes }

    init(client: ClientConnection, tls: TLSStream, authority: ClientConnection.Authority, env: ClientEnvironment)
        throws(HTTP2Error)
    {
        self.client = client
        self.tls = tls
        self.authority = authority
        self.env = env
        var limits = HTTP2ServerSession.Limits()
        limits.maxConcurrentStreams = UInt32(env.tls.http2MaxStreams)
        limits.maxHeaderListSize = UInt32(max(4096, env.exchanges.parserLimits.maxHeaderBytes))
        // A head from the origin within `max_header_bytes`, with what Sluice adds, always fits.
        limits.maxSendHeaderBlock = max(
            limits.maxSendHeaderBlock, 2 * env.exchanges.parserLimits.maxHeaderBytes + 64 * 1024)
        session = try HTTP2ServerSession(limits: limits)
        session.delegate = self
    }

    /// Bytes held unsent for the client before frames stop being produced.
    static let highWater = 256 * 1024
    /// High-water marks' worth of frames one flush writes at most while the socket takes them.
    static let flushRounds = 4

    // MARK: - Reading

    /// What the client sent is read through the session.
    func readable() {
        while tls.inputCount > 0, !closing {
            let (count, healthy) = tls.withFirstInputSegment { segment in (segment.count, session.receive(segment)) }
            tls.drainInput(count)
            if !healthy {
                env.logger.warning(
                    "HTTP/2 from \(client.peerText) for \(authority.host) broke the protocol; GOAWAY sent")
                closing = true
            }
        }
        startDue()
        flush()
    }

    // MARK: - Writing

    /// Frames the session has ready go out, while the client reads.
    ///
    /// Goes on while the socket takes them at once: such a write brings no drain event, and
    /// bytes already waiting in a stream (a response a breakpoint held, let go whole) would
    /// otherwise go out one high-water mark per frame from the client. At most
    /// ``flushRounds`` marks a turn, the rest in the next (other connections get their turn).
    func flush() {
        flushDue = false
        var rounds = 0
        while tls.outputCount < Self.highWater {
            var produced = 0
            _ = session.send(limit: Self.highWater - tls.outputCount) { frame in
                produced += frame.count
                gather.append(contentsOf: frame)
                if gather.count >= TLSStream.recordSize { writeGathered() }
            }
            writeGathered()
            rounds += 1
            guard produced > 0 else { break }
            if rounds == Self.flushRounds {
                flushSoon()
                break
            }
        }
        for stream in streams.values where stream.outputCount < ClientConnection.outputLowWater {
            // An injected reset waits for the bytes before it (``HTTP2Stream/resetWhenDrained``).
            if stream.resetWhenDrained, stream.outputCount == 0, !stream.closed, !resetting.contains(stream.id) {
                reset(stream)
            }
            stream.exchange?.clientDrained()
        }
        // Finished: after a GOAWAY for a connection error (RFC 9113 §5.4.1: the connection
        // closes, whatever streams nghttp2 left open), or a graceful one once its streams are
        // done (one whose answer went out whole may still be finishing: it is waited for).
        if closing || (session.isFinished && (streams.isEmpty || streams.values.contains { !$0.closed })) {
            // The GOAWAY goes out first; exchanges still running learn their client is gone.
            clientGone()
            client.closeAfterFlush()
        }
    }

    private func writeGathered() {
        guard !gather.isEmpty else { return }
        gather.withUnsafeBytes { tls.write($0, more: false) }
        gather.removeAll(keepingCapacity: true)
    }

    /// A flush at the end of this loop turn (exchanges write from libcurl's callbacks, in bursts).
    func flushSoon() {
        guard !flushDue else { return }
        flushDue = true
        loop.callSoon { [weak self] in if self?.flushDue == true { self?.flush() } }
    }

    func drained() { flush() }

    // MARK: - From the streams

    func respond(_ stream: HTTP2Stream, head: ResponseHead, hasBody: Bool) {
        // Connection-specific fields have no place in HTTP/2 (RFC 9113 §8.2.2); the session lowercases names.
        var headers = head.headers
        HopByHop.strip(&headers)
        session.respond(
            stream: stream.id, status: head.status, headers: headers.map { ($0.name, $0.value) }, hasBody: hasBody)
        flushSoon()
    }

    func respondInterim(_ stream: HTTP2Stream, head: ResponseHead) {
        var headers = head.headers
        HopByHop.strip(&headers)
        session.respondInterim(stream: stream.id, status: head.status, headers: headers.map { ($0.name, $0.value) })
        flushSoon()
    }

    func dataReady(_ stream: HTTP2Stream) {
        session.resume(stream.id)
        flushSoon()
    }

    func consumed(_ stream: HTTP2Stream, bytes: Int) {
        guard bytes > 0 else { return }
        session.consumed(stream.id, bytes: bytes)
        flushSoon()
    }

    func reset(_ stream: HTTP2Stream) {
        resetting.insert(stream.id)
        session.reset(stream.id, error: .internalError)
        flushSoon()
    }

    func exchangeDidFinish(_ stream: HTTP2Stream) {
        stream.exchange = nil
        // A response sent before the request body ended: the rest is not wanted (RFC 9113 §8.1).
        // It is read and dropped (curl 7.88 drops a response whose stream is reset while it still
        // uploads, though the RFC allows the reset), up to ``unwantedLimit``; past that,
        // RST_STREAM(NO_ERROR) says so, once the response went out whole.
        if !stream.requestEnded, !stream.closed { stream.discardInput() }
        if stream.closed { streams[stream.id] = nil }
        flushSoon()
    }

    /// Request body bytes read and dropped after a stream's exchange ended, before it is reset.
    static let unwantedLimit = 1 << 20

    /// A stream whose exchange is over got more of its request body.
    func discarded(_ stream: HTTP2Stream, bytes: Int) {
        consumed(stream, bytes: bytes)
        guard case .dropping(let before) = stream.leftover else { return }
        guard before + bytes > Self.unwantedLimit else { return stream.leftover = .dropping(bytes: before + bytes) }
        stream.leftover = .resetting
        if stream.responseEndSent { resetUnwanted(stream.id) }
    }

    private func resetUnwanted(_ id: Int32) {
        resetting.insert(id)
        session.reset(id, error: .noError)
        flushSoon()
    }

    // MARK: - The connection's end

    /// Shutdown: GOAWAY; the streams running finish.
    func shutdown() {
        lastAccepted = session.goAway()
        closing = streams.isEmpty
        flush()
    }

    /// The client went away: every exchange learns it.
    func clientGone() {
        closing = true
        stallTimer?.cancel()
        stallTimer = nil
        // Every exchange still running learns it, also one whose response went out whole and
        // that waits for its upstream transfer's end: the connection (its host) goes away now.
        for stream in Array(streams.values) {
            if !stream.closed { stream.streamClosed() }
            stream.exchange?.clientFailed(nil)
        }
    }
}

extension HTTP2Connection: HTTP2SessionDelegate {
    func http2(stream id: Int32, header name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool {
        let stream = streams[id] ?? open(id)
        // Request trailers are not forwarded (nor read as head fields when the exchange has not
        // started yet: HEADERS, DATA and the trailing HEADERS in one read).
        guard stream.exchange == nil, !stream.headEnded else { return true }
        stream.headBytes += name.count + value.count + 32  // RFC 9113 §6.5.2's accounting
        // Over the header limit: the rest of the block is not kept and the request gets a 431
        // (RFC 9113 §10.5.1), as on HTTP/1.1. Far over it (an HPACK bomb expands a few bytes into
        // megabytes), the stream is reset at once and nothing more of its block is handed over.
        guard stream.headBytes <= maxHeaderBytes else {
            guard stream.headBytes <= 2 * maxHeaderBytes + 16 * 1024 else {
                resetting.insert(id)
                env.exchanges.stats.http2Refused += 1
                return false
            }
            return true
        }
        let key = String(decoding: name, as: UTF8.self)
        if key.hasPrefix(":") {
            stream.pseudo[key] = String(decoding: value, as: UTF8.self)
        } else if key == "host", stream.pseudo[":authority"] != nil {
            // Must name the same authority (RFC 9113 §8.3.1); checked when the head is complete.
            stream.hostBesideAuthority = String(decoding: value, as: UTF8.self)
        } else {
            // Kept as received, UTF-8 or not (RFC 9110 §5.5), and forwarded byte for byte.
            stream.fields.append(name: key, wireValue: value, code: FieldCode(key))
        }
        return true
    }

    private func open(_ id: Int32) -> HTTP2Stream {
        let stream = HTTP2Stream(id: id, connection: self)
        streams[id] = stream
        watchStalls()
        return stream
    }

    func http2(streamHeadersEnded id: Int32, endStream: Bool) {
        guard let stream = streams[id] else { return }
        // (A trailer section's end comes as the stream's end, `http2(streamEnded:)`: nghttp2 calls
        // this for request heads only.)
        stream.headEnded = true
        guard stream.exchange == nil, !refusedAfterGoAway(stream) else { return }
        env.exchanges.stats.requests += 1
        env.exchanges.stats.http2Streams += 1
        if endStream {
            stream.requestDidEnd()
            return start(stream)
        }
        // A body follows: the exchange starts once this read is done, by when a body sent with
        // its head (a gRPC message) is complete and goes upstream with its length, not streamed.
        stream.awaitingStart = true
        startsDue.append(stream)
    }

    /// Starts the exchanges of streams whose heads came in the read just done.
    private func startDue() {
        let due = startsDue
        startsDue.removeAll()
        for stream in due where stream.awaitingStart && !stream.closed && !refusedAfterGoAway(stream) {
            start(stream)
        }
    }

    /// After GOAWAY, a stream past the last one it names is refused (`REFUSED_STREAM`), never
    /// acted on, even when its frames came in the same read: its client may send it again
    /// elsewhere (RFC 9113 §6.8).
    private func refusedAfterGoAway(_ stream: HTTP2Stream) -> Bool {
        guard let last = lastAccepted, stream.id > last else { return false }
        resetting.insert(stream.id)
        session.reset(stream.id, error: .refusedStream)
        streams[stream.id] = nil
        return true
    }

    func http2(stream id: Int32, data: UnsafeRawBufferPointer) {
        streams[id]?.received(data)
    }

    func http2(streamResponseSent id: Int32) {
        guard let stream = streams[id] else { return }
        stream.responseEndSent = true
        if case .resetting = stream.leftover, !stream.closed, !stream.requestEnded { resetUnwanted(id) }
    }

    func http2(streamEnded id: Int32) {
        streams[id]?.requestDidEnd()
    }

    func http2(streamClosed id: Int32, error: HTTP2ErrorCode) {
        let resetByUs = resetting.remove(id) != nil
        // A stream the client cancelled (RST_STREAM) young counts against rapid reset; one it
        // gave up on later (a deadline, a user's cancel) was a request like others: an attack
        // that waits as long is held to the streams allowed at once.
        if error != .noError, !resetByUs {
            let young =
                streams[id].map { EventLoop.monotonicNanoseconds() &- $0.openedAt < Self.rapidResetAge } ?? true
            noteReset(young: young)
        }
        guard let stream = streams[id] else { return }
        let delivered = error == .noError && stream.responseDelivered
        stream.streamClosed()
        if let exchange = stream.exchange {
            // Cut short: the exchange stops, its upstream transfer too. Ended after the whole
            // response went out: the exchange finishes on its own (and the stream goes then).
            if !delivered { exchange.clientFailed(nil) }
        } else {
            streams[id] = nil
        }
    }

    func http2(stream id: Int32, fill buffer: UnsafeMutableRawBufferPointer) -> HTTP2ServerSession.Fill {
        let fill = streams[id]?.fill(buffer) ?? .end(trailers: [])
        if case .bytes(let count) = fill, count > 0 { movedAt = EventLoop.monotonicNanoseconds() }
        return fill
    }
}
