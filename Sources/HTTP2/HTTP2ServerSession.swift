import CNGHTTP2

/// HTTP/2 error codes (RFC 9113 §7), for RST_STREAM and GOAWAY; unknown codes a peer sends are kept
/// by their number.
public enum HTTP2ErrorCode: Equatable, Sendable {
    case noError, protocolError, internalError, flowControlError, settingsTimeout, streamClosed, frameSizeError
    case refusedStream, cancel, compressionError, connectError, enhanceYourCalm, inadequateSecurity
    case http11Required
    case other(UInt32)

    public init(_ code: UInt32) {
        let known: [HTTP2ErrorCode] = [
            .noError, .protocolError, .internalError, .flowControlError, .settingsTimeout, .streamClosed,
            .frameSizeError, .refusedStream, .cancel, .compressionError, .connectError, .enhanceYourCalm,
            .inadequateSecurity, .http11Required,
        ]
        self = code < UInt32(known.count) ? known[Int(code)] : .other(code)
    }

    /// The number on the wire.
    public var code: UInt32 {
        switch self {
        case .noError: 0
        case .protocolError: 1
        case .internalError: 2
        case .flowControlError: 3
        case .settingsTimeout: 4
        case .streamClosed: 5
        case .frameSizeError: 6
        case .refusedStream: 7
        case .cancel: 8
        case .compressionError: 9
        case .connectError: 10
        case .enhanceYourCalm: 11
        case .inadequateSecurity: 12
        case .http11Required: 13
        case .other(let code): code
        }
    }
}

/// What a server session tells its owner, on the owner's thread, while it reads the client's bytes.
public protocol HTTP2SessionDelegate: AnyObject {
    /// A request's header field (pseudo-fields `:method`, `:path`… first), already HPACK-decoded;
    /// `false` resets the stream (RST_STREAM, ENHANCE_YOUR_CALM: a block far over the limit) and
    /// hands over nothing more of its header block.
    func http2(stream: Int32, header name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool
    /// The request's header section is complete; `endStream`: it has no body.
    func http2(streamHeadersEnded stream: Int32, endStream: Bool)
    /// Request body bytes.
    func http2(stream: Int32, data: UnsafeRawBufferPointer)
    /// The request's body ended (END_STREAM).
    func http2(streamEnded stream: Int32)
    /// The frame that ends the stream's response (END_STREAM, on HEADERS or DATA) was sent.
    func http2(streamResponseSent stream: Int32)
    /// The stream closed (its error code: 0 when it ended normally, else the client's or our reset).
    func http2(streamClosed stream: Int32, error: HTTP2ErrorCode)
    /// Response body bytes for `stream`, at most `buffer.count`.
    func http2(stream: Int32, fill buffer: UnsafeMutableRawBufferPointer) -> HTTP2ServerSession.Fill
}

/// The server side of one HTTP/2 connection (RFC 9113) over nghttp2, on any byte stream: the
/// owner hands it what the client sent and writes out what it produces, so it never blocks.
/// HPACK, stream states, flow control, SETTINGS, PING, GOAWAY and the protections against
/// header bombs, rapid resets and CONTINUATION floods are nghttp2's; flow control of request
/// bodies is manual (``consumed(_:bytes:)``): a stream's window opens as the owner uses what it
/// got, the connection's as bytes arrive.
/// - SeeAlso: nghttp2's `nghttp2_session_server_new2(3)`, `nghttp2_session_mem_recv(3)`,
///   `nghttp2_session_mem_send(3)`, `nghttp2_submit_response(3)`.
public final class HTTP2ServerSession {
    /// What a body read produced.
    public enum Fill: Equatable, Sendable {
        case bytes(Int)
        /// Nothing now: ``resume(_:)`` when there is.
        case wait
        /// The body ended (`trailers`: header fields to send after it).
        case end(trailers: [(String, String)])

        public static func == (lhs: Fill, rhs: Fill) -> Bool {
            switch (lhs, rhs) {
            case (.bytes(let a), .bytes(let b)): a == b
            case (.wait, .wait): true
            case (.end(let a), .end(let b)): a.map(\.0) == b.map(\.0) && a.map(\.1) == b.map(\.1)
            default: false
            }
        }
    }

    /// The limits announced in SETTINGS and enforced.
    public struct Limits: Sendable {
        public var maxConcurrentStreams: UInt32 = 100
        /// Each stream's receive window (request bodies), and the connection's.
        public var initialWindow: UInt32 = 256 * 1024
        /// The most header bytes (HPACK-decoded) a request may have.
        public var maxHeaderListSize: UInt32 = 64 * 1024
        /// The largest response header block sent, by nghttp2's bound of its HPACK encoding
        /// (about 6 bytes per field more than the field's name and value): its 64 KiB default
        /// refused heads that arrived within `max_header_bytes` as many small fields.
        public var maxSendHeaderBlock = 256 * 1024
        public init() {}
    }

    private var session: OpaquePointer?
    public weak var delegate: (any HTTP2SessionDelegate)?
    /// Trailers submitted for streams whose bodies ended.
    private var pendingTrailers: [Int32: [(String, String)]] = [:]

    /// Request body bytes received and not yet used by their streams' owners, per stream and in
    /// all; and the connection credit held back for them (``unusedCap``).
    private var unused: [Int32: Int] = [:]
    private var unusedTotal = 0
    private var creditOwed = 0
    /// Past this many unused bytes on the connection, its window opens only as bytes are used:
    /// one stream that stalls holds back its own client only, while many that stall at once
    /// cannot make the connection buffer `streams × window`.
    static let unusedCap = 4 << 20

    /// Bytes arrived for `stream`: the connection's window opens at once while the unused total
    /// is under the cap, else the credit waits for them to be used.
    private func arrived(_ stream: Int32, _ length: Int, session raw: OpaquePointer) {
        unused[stream, default: 0] += length
        unusedTotal += length
        if unusedTotal <= Self.unusedCap {
            _ = nghttp2_session_consume_connection(raw, length)
        } else {
            creditOwed += length
        }
    }

    /// `bytes` of `stream` were used (or dropped with it): the credit the connection is owed for
    /// them, first.
    private func used(_ stream: Int32, _ bytes: Int, session raw: OpaquePointer) {
        let left = unused[stream] ?? 0
        let count = min(bytes, left)
        if count == left { unused[stream] = nil } else { unused[stream] = left - count }
        unusedTotal -= count
        let pay = min(creditOwed, count)
        if pay > 0 {
            creditOwed -= pay
            _ = nghttp2_session_consume_connection(raw, pay)
        }
    }

    public init(limits: Limits = Limits()) throws(HTTP2Error) {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { throw HTTP2Error("callbacks") }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) {
            nghttp2, frame, name, nameLength, value, valueLength, _, owner in
            guard let frame, let owner else { return 0 }
            let session = Unmanaged<HTTP2ServerSession>.fromOpaque(owner).takeUnretainedValue()
            let accepted =
                session.delegate?.http2(
                    stream: sluice_h2_frame_stream(frame),
                    header: UnsafeRawBufferPointer(start: name, count: nameLength),
                    value: UnsafeRawBufferPointer(start: value, count: valueLength)) ?? true
            guard !accepted else { return 0 }
            // Refused: a block far over the limit (an HPACK bomb), ENHANCE_YOUR_CALM (RFC 9113
            // §10.5), not nghttp2's INTERNAL_ERROR, which would blame this side.
            _ = nghttp2_submit_rst_stream(
                nghttp2, UInt8(NGHTTP2_FLAG_NONE.rawValue), sluice_h2_frame_stream(frame),
                UInt32(NGHTTP2_ENHANCE_YOUR_CALM.rawValue))
            return Int32(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, owner in
            guard let frame, let owner else { return 0 }
            let session = Unmanaged<HTTP2ServerSession>.fromOpaque(owner).takeUnretainedValue()
            let stream = sluice_h2_frame_stream(frame)
            let endStream = sluice_h2_frame_flags(frame) & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
            switch Int(sluice_h2_frame_type(frame)) {
            case Int(NGHTTP2_HEADERS.rawValue):
                if sluice_h2_headers_category(frame) == Int32(NGHTTP2_HCAT_REQUEST.rawValue) {
                    session.delegate?.http2(streamHeadersEnded: stream, endStream: endStream)
                } else if endStream {
                    session.delegate?.http2(streamEnded: stream)  // request trailers end the body
                }
            case Int(NGHTTP2_DATA.rawValue):
                if endStream { session.delegate?.http2(streamEnded: stream) }
            default:
                break
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, owner in
            guard let frame, let owner else { return 0 }
            let type = Int(sluice_h2_frame_type(frame))
            guard type == Int(NGHTTP2_HEADERS.rawValue) || type == Int(NGHTTP2_DATA.rawValue),
                sluice_h2_frame_flags(frame) & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
            else { return 0 }
            let session = Unmanaged<HTTP2ServerSession>.fromOpaque(owner).takeUnretainedValue()
            session.delegate?.http2(streamResponseSent: sluice_h2_frame_stream(frame))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { raw, _, stream, data, length, owner in
            guard let owner else { return 0 }
            // The connection's window opens at once (up to ``unusedCap`` unused bytes); each
            // stream's only as its owner uses what it got (``consumed(_:bytes:)``). A stream
            // whose origin reads slowly then holds back its own client, never the connection's
            // other streams.
            let session = Unmanaged<HTTP2ServerSession>.fromOpaque(owner).takeUnretainedValue()
            if let raw { session.arrived(stream, length, session: raw) }
            session.delegate?.http2(stream: stream, data: UnsafeRawBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, stream, errorCode, owner in
            guard let owner else { return 0 }
            let session = Unmanaged<HTTP2ServerSession>.fromOpaque(owner).takeUnretainedValue()
            session.pendingTrailers[stream] = nil
            // What it left unused is dropped with it: the connection is owed its credit.
            if let raw = session.session, let left = session.unused[stream] { session.used(stream, left, session: raw) }
            session.delegate?.http2(streamClosed: stream, error: HTTP2ErrorCode(errorCode))
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks) { session, frame, error, _ in
            // A response head nghttp2 could not send (over the block limit): the stream is reset,
            // never left open with its client waiting for an answer that will not come. (Heads
            // dropped because the stream or session closed need nothing.)
            guard let session, let frame, Int(sluice_h2_frame_type(frame)) == Int(NGHTTP2_HEADERS.rawValue),
                error == Int32(NGHTTP2_ERR_FRAME_SIZE_ERROR.rawValue)
            else { return 0 }
            _ = nghttp2_submit_rst_stream(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), sluice_h2_frame_stream(frame),
                UInt32(NGHTTP2_INTERNAL_ERROR.rawValue))
            return 0
        }
        var option: OpaquePointer?
        guard nghttp2_option_new(&option) == 0, let option else { throw HTTP2Error("options") }
        defer { nghttp2_option_del(option) }
        nghttp2_option_set_no_auto_window_update(option, 1)
        nghttp2_option_set_max_send_header_block_length(option, limits.maxSendHeaderBlock)
        nghttp2_option_set_max_deflate_dynamic_table_size(option, 4096)
        var made: OpaquePointer?
        guard nghttp2_session_server_new2(&made, callbacks, nil, option) == 0, let made else {
            throw HTTP2Error("session")
        }
        session = made
        nghttp2_session_set_user_data(made, Unmanaged.passUnretained(self).toOpaque())
        var settings = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: limits.maxConcurrentStreams
            ),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: limits.initialWindow),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: limits.maxHeaderListSize),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
        ]
        guard nghttp2_submit_settings(made, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count) == 0 else {
            throw HTTP2Error("settings")
        }
        // The connection's window as large as a stream's, not the 64 KiB default.
        if limits.initialWindow > 65535 {
            _ = nghttp2_session_set_local_window_size(
                made, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, Int32(clamping: limits.initialWindow))
        }
    }

    deinit { if let session { nghttp2_session_del(session) } }

    /// Reads what the client sent; `false` when the connection must end (a protocol error:
    /// nghttp2 has queued the GOAWAY that says why).
    public func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let session, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count > 0 else {
            return true
        }
        return nghttp2_session_mem_recv(session, base, bytes.count) >= 0
    }

    /// Hands what is ready for the client to `write`, until nothing is (or `limit` bytes went).
    public func send(limit: Int = .max, _ write: (UnsafeRawBufferPointer) -> Void) -> Bool {
        guard let session else { return false }
        var sent = 0
        while sent < limit {
            var data: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &data)
            if count < 0 { return false }
            guard count > 0, let data else { break }
            write(UnsafeRawBufferPointer(start: data, count: count))
            sent += count
        }
        return true
    }

    /// Whether the session has nothing more to do (both sides are done: close the connection).
    public var isFinished: Bool {
        guard let session else { return true }
        return nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0
    }

    /// Submits a response head; `hasBody`: body bytes follow through the delegate's `fill`.
    @discardableResult
    public func respond(stream: Int32, status: Int, headers: [(String, String)], hasBody: Bool) -> Bool {
        guard let session else { return false }
        let fields = [(":status", String(status))] + headers
        return Self.withNV(fields) { nv, count in
            guard hasBody else { return nghttp2_submit_response(session, stream, nv, count, nil) == 0 }
            var provider = nghttp2_data_provider()
            provider.read_callback = { _, stream, buffer, length, flags, _, owner in
                guard let owner, let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
                let session = Unmanaged<HTTP2ServerSession>.fromOpaque(owner).takeUnretainedValue()
                let fill =
                    session.delegate?.http2(
                        stream: stream, fill: UnsafeMutableRawBufferPointer(start: buffer, count: length))
                    ?? .end(trailers: [])
                switch fill {
                case .bytes(let count): return count
                case .wait: return Int(NGHTTP2_ERR_DEFERRED.rawValue)
                case .end(let trailers):
                    flags.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue)
                    if !trailers.isEmpty {
                        flags.pointee |= UInt32(NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue)
                        session.pendingTrailers[stream] = trailers
                        session.submitTrailersSoon(stream)
                    }
                    return 0
                }
            }
            return nghttp2_submit_response(session, stream, nv, count, &provider) == 0
        }
    }

    /// Submits an interim (1xx) head: a HEADERS frame that leaves the stream open, before the
    /// final one (RFC 9113 §8.1).
    @discardableResult
    public func respondInterim(stream: Int32, status: Int, headers: [(String, String)]) -> Bool {
        guard let session, (100..<200).contains(status) else { return false }
        let fields = [(":status", String(status))] + headers
        return Self.withNV(fields) { nv, count in
            nghttp2_submit_headers(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, nil, nv, count, nil) >= 0
        }
    }

    /// Trailers go out after the data frame that carried the end flag without END_STREAM.
    private func submitTrailersSoon(_ stream: Int32) {
        guard let session, let trailers = pendingTrailers.removeValue(forKey: stream) else { return }
        _ = Self.withNV(trailers) { nv, count in nghttp2_submit_trailer(session, stream, nv, count) == 0 }
    }

    /// Body bytes for `stream` became available after a `.wait`.
    public func resume(_ stream: Int32) {
        guard let session else { return }
        _ = nghttp2_session_resume_data(session, stream)
    }

    /// The owner used `bytes` of `stream`'s request body: the client may send that much more.
    public func consumed(_ stream: Int32, bytes: Int) {
        guard let session, bytes > 0 else { return }
        used(stream, bytes, session: session)
        _ = nghttp2_session_consume_stream(session, stream, bytes)
    }

    /// Resets a stream (`RST_STREAM`): 8 `CANCEL` by default.
    public func reset(_ stream: Int32, error: HTTP2ErrorCode = .cancel) {
        guard let session else { return }
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, error.code)
    }

    /// `GOAWAY` with the last stream accepted (shutdown): streams running finish, no new ones
    /// start. Returns that stream: the owner must not act on a later one (RFC 9113 §6.8), even
    /// one whose frames were in the same read.
    @discardableResult
    public func goAway(error: HTTP2ErrorCode = .noError) -> Int32 {
        guard let session else { return 0 }
        let last = nghttp2_session_get_last_proc_stream_id(session)
        _ = nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), last, error.code, nil, 0)
        return last
    }

    private static func withNV<R>(
        _ fields: [(String, String)], _ body: (UnsafePointer<nghttp2_nv>, Int) -> R
    ) -> R {
        var storage: [[UInt8]] = []
        storage.reserveCapacity(fields.count * 2)
        for (name, value) in fields {
            storage.append(Array(name.lowercased().utf8))
            storage.append(Array(value.utf8))
        }
        let pointers: [UnsafeMutablePointer<UInt8>] = storage.map { bytes in
            let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, bytes.count))
            pointer.initialize(from: bytes, count: bytes.count)
            return pointer
        }
        defer { for pointer in pointers { pointer.deallocate() } }
        var nv: [nghttp2_nv] = []
        for index in 0..<fields.count {
            nv.append(
                nghttp2_nv(
                    name: pointers[2 * index], value: pointers[2 * index + 1], namelen: storage[2 * index].count,
                    valuelen: storage[2 * index + 1].count, flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
        }
        return nv.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
    }
}

/// A session could not be made.
public struct HTTP2Error: Error, CustomStringConvertible {
    public let description: String
    init(_ what: String) { description = "nghttp2 could not create the \(what)" }
}
