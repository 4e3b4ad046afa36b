import EventIO

/// Respond: one response on its way to the client. The head is held back until the first body
/// bytes so that both leave in one write (or, at the latest, at the end of the loop turn); the
/// body is framed as the head announced; a client that falls behind pauses the source. It is the
/// end of an exchange's delivery chain (``DeliveryChain``): what stages do happens before.
final class ResponseOutput {
    /// Above this many unsent bytes, the source pauses.
    static let highWater = 64 * 1024

    /// How far the response got.
    enum State {
        /// Nothing prepared yet.
        case none
        /// The head, ready; it leaves with the first body bytes.
        case headHeld(WireHead.Form)
        /// Bytes reached the client (or its socket buffer).
        case sending
        /// The whole response was written.
        case complete
    }

    let stream: any ClientStream
    private(set) var state = State.none
    private(set) var framing = ResponseWriter.Framing.none
    /// The status answered (0 before a head was prepared).
    var status = 0
    /// Body bytes written.
    private(set) var bytesSent: Int64 = 0
    /// The body length announced (`Content-Length` framing), else 0.
    private(set) var bodyLength: Int64 = 0
    /// The connection stays open after this response.
    var keepAlive: Bool
    /// The source paused because the client fell behind; it resumes when the client drains.
    private(set) var stalled = false

    /// The client takes the response as parts, not bytes (an HTTP/2 stream).
    private let parts: (any ResponseParts)?
    /// The origin's trailer fields, written in a chunked body's trailer section (RFC 9112
    /// §7.1.2); a body framed by its length has no room for them (they are dropped, as a
    /// recipient may).
    var trailers: HTTPFields?

    init(stream: any ClientStream, keepAlive: Bool) {
        self.stream = stream
        self.keepAlive = keepAlive
        parts = stream.parts
    }

    /// The client reads HTTP/1.1 bytes (heads made as bytes, like a plain hit's, may go to it).
    var writesBytes: Bool { parts == nil }

    /// Bytes of the response went out.
    var headSent: Bool {
        switch state {
        case .sending, .complete: true
        case .none, .headHeld: false
        }
    }

    var isComplete: Bool { if case .complete = state { true } else { false } }
    var isHoldingHead: Bool { if case .headHeld = state { true } else { false } }

    /// The client cannot take more now (behind, or gone: its error event is on the way).
    var isBehind: Bool { stream.writeBroken || pending >= ResponseOutput.highWater }

    /// Bytes written but not yet sent.
    private var pending: Int { stream.outputCount }

    // MARK: - Head

    /// The client head for `response`, held until the body's first bytes.
    func prepare(
        _ response: ResponseHead, request: ProxyRequest, date: String, fromCache: Bool, cacheStatus: CacheStatus?,
        marks: [String]
    ) {
        hold(
            clientHead(
                response, request: request, date: date, fromCache: fromCache, cacheStatus: cacheStatus, marks: marks))
    }

    /// The client's head for `response` as it is written, with its framing.
    func clientHead(
        _ response: ResponseHead, request: ProxyRequest, date: String, fromCache: Bool, cacheStatus: CacheStatus?,
        marks: [String]
    ) -> WireHead {
        var edit = Forwarding.clientEdit(
            response, request: request, date: date, keepAlive: keepAlive, stripped: fromCache)
        let validation = marks.isEmpty ? nil : marks.joined(separator: ", ")
        let form: WireHead.Form
        if parts == nil {
            // An HTTP/1.1 client's head is written straight from the origin's lines.
            form = .bytes(
                ResponseWriter.head(
                    status: response.status, reason: response.reason, origin: response.headers, edit: edit,
                    cacheStatus: cacheStatus, validation: validation))
        } else {
            // HTTP/2 takes fields.
            if let cacheStatus {
                edit.added.append(.init(name: "Cache-Status", value: cacheStatus.description, code: .cacheStatus))
            }
            if let validation { edit.added.append(.init(name: "Sluice-Validation", value: validation)) }
            form = .parts(
                ResponseHead(
                    status: response.status, reason: response.reason, headers: edit.apply(to: response.headers)))
        }
        // With `Content-Length` framing, the origin's first such line is the client's.
        return WireHead(
            form: form, framing: edit.framing, status: response.status,
            bodyLength: edit.framing == .length ? response.headers[.contentLength].flatMap { Int64($0) } ?? 0 : 0)
    }

    /// Holds a client head (see ``clientHead(_:request:date:fromCache:cacheStatus:marks:)``).
    func hold(_ head: WireHead) {
        self.framing = head.framing
        if framing == .close { keepAlive = false }
        state = .headHeld(head.form)
        status = head.status
        bodyLength = head.bodyLength
    }

    /// Sends a head still held back for the body (none came in this loop turn).
    func flushHeldHead() {
        guard isHoldingHead, !stream.writeBroken else { return }
        send()
    }

    /// Drops a held head (a problem answers instead).
    func dropHeldHead() { if isHoldingHead { state = .none } }

    // MARK: - Body

    /// Body bytes; `false` = not taken (the client is behind: offer them again after it drains).
    func deliver(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // The client is gone (its error event is on the way): the bytes have nowhere to go.
        if stream.writeBroken { return true }
        if pending >= ResponseOutput.highWater {
            stalled = true
            return false
        }
        emit(bytes)
        return true
    }

    /// Whether body bytes kept as a file may go to ``deliver(file:range:)``: the stream sends
    /// files without copying, and the framing is the bytes as they are.
    var sendsFiles: Bool { stream.sendsFiles && framing == .length }

    /// The rest of the body from a file, written with the held head, sent by the kernel from the
    /// file's pages (see ``sendsFiles``); `false` = not taken (the client is behind).
    func deliver(file: SharedFile, range: Range<Int>) -> Bool {
        if stream.writeBroken { return true }
        if pending >= ResponseOutput.highWater {
            stalled = true
            return false
        }
        guard sendsFiles else {
            emit(UnsafeRawBufferPointer(rebasing: file.bytes[range]))
            return true
        }
        if case .headHeld(.bytes(let head)) = state {
            state = .sending
            head.withUnsafeBytes { stream.write($0, file: file, range: range) }
        } else {
            stream.write(UnsafeRawBufferPointer(start: nil, count: 0), file: file, range: range)
        }
        bytesSent += Int64(range.count)
        return true
    }

    /// The source stops until the client drains.
    func stall() { stalled = true }

    /// The client drained: whether a source was waiting for that.
    func takeDrain() -> Bool {
        defer { stalled = false }
        return stalled
    }

    /// The client's socket, for the rest of a body of `count` bytes to be moved into it by the
    /// kernel (``SocketSplice``), when that keeps the response exactly as written here: a plain
    /// HTTP/1.1 client, the body framed by its length with `count` bytes still due, and nothing
    /// queued before them. A head still held goes out first; `nil` when anything is in the way.
    func spliceSink(for count: Int64) -> Connection? {
        guard parts == nil, framing == .length, bodyLength - bytesSent == count, count > 0,
            let socket = stream as? Connection, !socket.writeBroken, socket.outputCount == 0
        else { return nil }
        switch state {
        case .headHeld(.bytes(let head)):
            state = .sending
            head.withUnsafeBytes { socket.write($0, more: false) }
        case .sending: break
        case .none, .headHeld(.parts), .complete: return nil
        }
        return socket.outputCount == 0 && !socket.writeBroken ? socket : nil
    }

    /// Bytes the kernel moved into the client's socket (``spliceSink(for:)``).
    func spliced(_ count: Int64) { bytesSent += count }

    /// Whether a body piece with more to follow may wait in the kernel for it (`MSG_MORE`).
    /// Pieces arrive from libcurl 16 KiB at a time and from the native transport as the socket
    /// held them: a small one may wait to fill a packet with the next; a large one fills its own
    /// packets, and holding back its tail would cost a system call at the end of the loop turn to
    /// push it out (`TCP_NODELAY`), one per turn of a long body.
    static func mayHold(_ count: Int) -> Bool { count <= 16 * 1024 }

    /// Writes body bytes in the response's framing; `beforeCut`: the connection is cut next, so
    /// nothing may stay held back in the kernel (a reset drops it).
    func emit(_ bytes: UnsafeRawBufferPointer, beforeCut: Bool = false) {
        if let parts {
            // The client frames the body itself (HTTP/2 DATA): the bytes as they are.
            sendHead(to: parts)
            if !bytes.isEmpty, framing != .none { parts.respondBody(bytes) }
            bytesSent += Int64(bytes.count)
            return
        }
        switch framing {
        case .none:
            return
        case .chunked:
            guard !bytes.isEmpty else { return send() }
            let size = ResponseWriter.chunkHeader(bytes.count)
            // The last chunk (sent without `more`) follows.
            let more = !beforeCut && ResponseOutput.mayHold(bytes.count)
            size.withUnsafeBytes { sizeBytes in
                ResponseWriter.crlf.withUnsafeBytes { crlf in send(more: more, sizeBytes, bytes, crlf) }
            }
        case .length, .close:
            // The last piece of a known length goes out at once.
            let more = framing == .close || bytesSent + Int64(bytes.count) < bodyLength
            send(more: more && !beforeCut && ResponseOutput.mayHold(bytes.count), bytes)
        }
        bytesSent += Int64(bytes.count)
    }

    /// The body is complete: close the framing.
    func end() {
        if let parts {
            sendHead(to: parts)
            parts.respondEnd()
            state = .complete
            return
        }
        if framing == .chunked {
            if let trailers, !trailers.fields.isEmpty {
                ResponseWriter.lastChunk(trailers: trailers).withUnsafeBytes { send($0) }
            } else {
                ResponseWriter.lastChunk.withUnsafeBytes { send($0) }
            }
        } else {
            send()
        }
        state = .complete
    }

    /// A whole response written at once (a problem, a local answer).
    func complete(head: [UInt8], body: String, status: Int, bodyBytes: Int64) {
        complete(head: head, body: Array(body.utf8), status: status, bodyBytes: bodyBytes)
    }

    /// A whole answer: written as one, or handed to a client that takes parts.
    func complete(_ head: ResponseHead, body: [UInt8], bodyBytes: Int64) {
        guard let parts else {
            return complete(head: ResponseWriter.head(head), body: body, status: head.status, bodyBytes: bodyBytes)
        }
        parts.respond(head, hasBody: !body.isEmpty)
        if !body.isEmpty { body.withUnsafeBytes { parts.respondBody($0) } }
        parts.respondEnd()
        status = head.status
        bytesSent = bodyBytes
        state = .complete
    }

    /// A whole answer made of bytes: head and body in one write.
    func complete(head: [UInt8], body: [UInt8], status: Int, bodyBytes: Int64) {
        head.withUnsafeBytes { headBytes in body.withUnsafeBytes { stream.write(headBytes, $0, more: false) } }
        self.status = status
        bytesSent = bodyBytes
        state = .complete
    }

    /// An interim (1xx) head, at once: its bytes, or an interim part for a client that takes
    /// parts (an HTTP/2 stream's HEADERS frame).
    func interim(_ head: ResponseHead) {
        if let parts { return parts.respondInterim(head) }
        stream.write(ResponseWriter.head(status: head.status, reason: head.reason, headers: head.headers))
    }

    /// Sluice's own `100 Continue`, in answer to the client's expectation.
    func sendContinue() {
        if let parts { return parts.respondInterim(ResponseHead(status: 100, reason: "Continue")) }
        stream.write(ResponseWriter.continueResponse)
    }

    /// A held head goes to a client that takes parts: with a body to follow unless none is framed.
    private func sendHead(to parts: any ResponseParts) {
        guard case .headHeld(.parts(let head)) = state else { return }
        state = .sending
        parts.respond(head, hasBody: framing != .none && !(framing == .length && bodyLength == 0))
    }

    /// Writes the held-back head together with `pieces` (at most three), in one system call when
    /// the socket takes them; `more`: more of the body follows (see ``ClientStream/write(_:more:)``).
    private func send(more: Bool = false, _ pieces: UnsafeRawBufferPointer...) {
        if let parts {
            sendHead(to: parts)
            for piece in pieces where !piece.isEmpty { parts.respondBody(piece) }
            return
        }
        guard case .headHeld(.bytes(let head)) = state else {
            switch pieces.count {
            case 0: return
            case 1: stream.write(pieces[0], more: more)
            case 2: stream.write(pieces[0], pieces[1], more: more)
            default: stream.write(pieces[0], pieces[1], pieces[2], more: more)
            }
            return
        }
        state = .sending
        head.withUnsafeBytes { headBytes in
            switch pieces.count {
            case 0: stream.write(headBytes, more: more)
            case 1: stream.write(headBytes, pieces[0], more: more)
            case 2: stream.write(headBytes, pieces[0], pieces[1], more: more)
            default: stream.write(headBytes, pieces[0], pieces[1], pieces[2], more: more)
            }
        }
    }
}

extension ResponseOutput {
    /// Body bytes as a delivery stage pushes them (``DeliveryPush``).
    func take(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush) -> Bool {
        switch push {
        case .offer: return deliver(bytes)
        case .release: emit(bytes)
        case .beforeCut: emit(bytes, beforeCut: true)
        }
        return true
    }
}
