import CRedis
@_spi(LibeventAdapter) import EventIO

/// One connection to a Redis (or Valkey) server on an ``EventLoop``, through hiredis's async API
/// and its libevent adapter: commands are sent as binary-safe argument vectors and answered by
/// callbacks on the loop, never blocking it. A connection that fails stays failed: its owner
/// makes a new one (with its own backoff). Loop-confined.
public final class RedisConnection {
    /// A reply, copied out of hiredis's reply object.
    public indirect enum Reply: Sendable, Equatable {
        case string([UInt8])
        case status(String)
        case integer(Int64)
        case array([Reply])
        case null
        case error(String)

        /// The text of a string or status reply.
        public var text: String? {
            switch self {
            case .string(let bytes): String(decoding: bytes, as: UTF8.self)
            case .status(let text): text
            default: nil
            }
        }
    }

    public enum State: Equatable, Sendable {
        case connecting
        case connected
        /// Gone, with why; callbacks of unanswered commands got `nil`.
        case closed(String)
    }

    /// What `AUTH` sends before any other command (Redis 6 ACL user, or the `requirepass` password
    /// alone). Never part of a description or a log line.
    public struct Credentials: Sendable, Equatable {
        public var user: String?
        public var password: String
        public init(user: String?, password: String) {
            self.user = user
            self.password = password
        }
    }

    /// With credentials, `.connected` waits for the server to accept them.
    private enum Login: Equatable {
        case notNeeded
        case pending(socketUp: Bool)
        case accepted
    }

    public private(set) var state = State.connecting
    private var context: UnsafeMutablePointer<redisAsyncContext>?
    private let onStateChange: (State) -> Void
    private var login = Login.notNeeded

    /// Starts connecting to `host:port`, authenticating with `credentials` first when given;
    /// `onStateChange` hears `.connected` (once the credentials are accepted) or `.closed` (once).
    public init(
        loop: EventLoop, host: String, port: UInt16, credentials: Credentials? = nil,
        onStateChange: @escaping (State) -> Void
    ) {
        self.onStateChange = onStateChange
        var error = [CChar](repeating: 0, count: 256)
        let data = Unmanaged.passUnretained(self).toOpaque()
        context = loop.attach { eventBase in
            sluice_redis_connect(
                host, Int32(port), eventBase, data,
                { context, status in
                    guard let context, let data = sluice_redis_data(context) else { return }
                    let connection = Unmanaged<RedisConnection>.fromOpaque(data).takeUnretainedValue()
                    if status == REDIS_OK {
                        connection.socketConnected()
                    } else {
                        // hiredis frees the context after this callback.
                        connection.context = nil
                        connection.changed(.closed(String(cString: sluice_redis_error(context))))
                    }
                },
                { context, status in
                    guard let context, let data = sluice_redis_data(context) else { return }
                    let connection = Unmanaged<RedisConnection>.fromOpaque(data).takeUnretainedValue()
                    connection.context = nil
                    let reason = status == REDIS_OK ? "closed" : String(cString: sluice_redis_error(context))
                    connection.changed(.closed(reason.isEmpty ? "the connection was lost" : reason))
                }, &error, error.count)
        }
        if context == nil {
            let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            state = .closed(reason)
            loop.callSoon { [weak self] in self?.onStateChange(.closed(reason)) }
        }
        if let credentials, context != nil {
            login = .pending(socketUp: false)
            let arguments = [credentials.user.map { Array($0.utf8) }, Array(credentials.password.utf8)].compactMap {
                $0
            }
            send([Array("AUTH".utf8)] + arguments) { [weak self] reply in self?.authAnswered(reply) }
        }
    }

    deinit { close() }

    private func socketConnected() {
        if case .pending = login {
            login = .pending(socketUp: true)
        } else {
            changed(.connected)
        }
    }

    /// The answer to `AUTH`: connected, or closed with the server's refusal.
    private func authAnswered(_ reply: Reply?) {
        guard let reply else { return }  // the connection went away: its own callback says why
        guard case .status("OK") = reply else {
            let reason: String
            if case .error(let text) = reply { reason = text } else { reason = "an unexpected answer" }
            // The state says why before close() fails what was pending (their callbacks may ask).
            let refused = State.closed("the server refused the credentials (\(reason))")
            state = refused
            close()
            onStateChange(refused)
            return
        }
        let socketUp = login == .pending(socketUp: true)
        login = .accepted
        if socketUp { changed(.connected) }
    }

    private func changed(_ new: State) {
        guard state != new else { return }
        if case .closed = state { return }
        state = new
        onStateChange(new)
    }

    /// Sends a command; `reply` runs once on the loop with the reply, or `nil` when the
    /// connection went away first. `false`: not sent (closed); `reply` does not run.
    @discardableResult
    public func send(_ arguments: [[UInt8]], reply: @escaping (Reply?) -> Void) -> Bool {
        enqueue(arguments, box: Callback(once: true, reply))
    }

    /// Subscribes to `channel`: `message` runs for every message published on it, until the
    /// connection closes (then once with `nil`). The connection then only takes (un)subscriptions.
    @discardableResult
    public func subscribe(_ channel: String, message: @escaping ([UInt8]?) -> Void) -> Bool {
        enqueue(
            [Array("SUBSCRIBE".utf8), Array(channel.utf8)],
            box: Callback(once: false) { reply in
                guard let reply else { return message(nil) }
                // ["message", channel, payload]; the subscription's own confirmation is skipped.
                if case .array(let parts) = reply, parts.count == 3, parts[0].text == "message",
                    case .string(let payload) = parts[2]
                {
                    message(payload)
                }
            })
    }

    private final class Callback {
        let once: Bool
        let body: (Reply?) -> Void
        init(once: Bool, _ body: @escaping (Reply?) -> Void) {
            self.once = once
            self.body = body
        }
    }

    private func enqueue(_ arguments: [[UInt8]], box: Callback) -> Bool {
        guard let context else { return false }
        if case .closed = state { return false }
        let privdata = Unmanaged.passRetained(box).toOpaque()
        // Each argument's bytes are copied by hiredis while the command is formatted.
        var lengths = arguments.map { $0.count }
        let pointers = arguments.map { argument -> UnsafeMutablePointer<CChar> in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, argument.count))
            argument.withUnsafeBytes { raw in
                if let base = raw.baseAddress {
                    UnsafeMutableRawPointer(copy).copyMemory(from: base, byteCount: raw.count)
                }
            }
            return copy
        }
        defer { for pointer in pointers { pointer.deallocate() } }
        var argv = pointers.map { UnsafePointer<CChar>?(UnsafePointer($0)) }
        let status = sluice_redis_command(
            context,
            { _, reply, privdata in
                guard let privdata else { return }
                let box = Unmanaged<Callback>.fromOpaque(privdata)
                let callback = box.takeUnretainedValue()
                let copied = reply.map { RedisConnection.copy($0.assumingMemoryBound(to: redisReply.self)) }
                if callback.once || copied == nil { box.release() }
                callback.body(copied)
            }, privdata, Int32(arguments.count), &argv, &lengths)
        guard status == REDIS_OK else {
            Unmanaged<Callback>.fromOpaque(privdata).release()
            return false
        }
        return true
    }

    private static func copy(_ reply: UnsafePointer<redisReply>) -> Reply {
        switch sluice_reply_type(reply) {
        case REDIS_REPLY_STRING:
            let length = sluice_reply_length(reply)
            guard length > 0, let bytes = sluice_reply_bytes(reply) else { return .string([]) }
            return .string(Array(UnsafeRawBufferPointer(start: bytes, count: length)))
        case REDIS_REPLY_STATUS:
            return .status(String(cString: sluice_reply_bytes(reply)))
        case REDIS_REPLY_ERROR:
            return .error(String(cString: sluice_reply_bytes(reply)))
        case REDIS_REPLY_INTEGER:
            return .integer(sluice_reply_integer(reply))
        case REDIS_REPLY_ARRAY:
            return .array(
                (0..<sluice_reply_count(reply)).compactMap { index in
                    sluice_reply_element(reply, index).map { copy($0) }
                })
        default:
            return .null
        }
    }

    /// Closes the connection; unanswered commands get `nil`.
    public func close() {
        guard let context else { return }
        self.context = nil
        // Closed on purpose: hiredis's disconnect callback must not reach this object again.
        sluice_redis_forget(context)
        redisAsyncFree(context)
        if case .closed = state {
        } else {
            state = .closed("closed")
        }
    }
}
