/// A parsed request head: what the client asked the proxy for.
public struct ProxyRequest: Sendable, Equatable {
    /// How the request body is framed (RFC 9112 §6).
    public enum BodyFraming: Sendable, Equatable {
        /// No body.
        case none
        /// `Content-Length: n`.
        case length(Int64)
        /// `Transfer-Encoding: chunked`.
        case chunked
        /// Delimited by the end of its stream (an HTTP/2 request without `content-length`): the
        /// body reaches the exchange as the stream's pieces, unframed.
        case streamEnd
    }

    /// The method, case-sensitive (`GET`).
    public var method: String
    /// The request target.
    public var target: RequestTarget
    /// The target exactly as received (for logs).
    public var rawTarget: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// The header fields, in order.
    public var headers: HTTPFields
    /// How the body is framed.
    public var bodyFraming: BodyFraming
    /// The client takes trailers (an HTTP/2 stream that sent `te: trailers`, gRPC): Sluice asks
    /// the origin for them too. An HTTP/1.1 client's `TE` is hop-by-hop and goes no further.
    public var takesTrailers = false
    /// The protocol the request came in: an HTTP/2 stream's request carries `minorVersion` 1 for
    /// the HTTP/1.1 rules it shares, and says `2` where the protocol itself is named (`Via`).
    public var wire: Wire = .http1

    /// The protocols a request comes in.
    public enum Wire: Sendable, Equatable {
        case http1
        case http2
    }

    /// `Via`'s received-protocol for this request (RFC 9110 §7.6.3): `1.0`, `1.1` or `2`.
    public var receivedProtocol: String {
        switch wire {
        case .http2: "2"
        case .http1: minorVersion == 0 ? "1.0" : "1.1"
        }
    }

    /// Whether the connection can stay open after this exchange (RFC 9112 §9.3).
    public var wantsKeepAlive: Bool {
        guard headers.contains(.connection) else { return minorVersion != 0 }
        let connection = headers.tokens(.connection)
        if minorVersion == 0 { return connection.contains("keep-alive") }
        return !connection.contains("close")
    }

    /// What the client's `Expect` asks (RFC 9110 §10.1.1).
    public enum Expectation: Equatable, Sendable {
        /// Nothing (no field, or only empty members).
        case none
        /// `100-continue` (once or more).
        case continueFirst
        /// A member Sluice does not know: 417.
        case unsupported(String)
    }

    /// The members of every `Expect` line as one list (RFC 9110 §5.3), empty ones ignored
    /// (§5.6.1.2), compared case-insensitively.
    public var expectation: Expectation {
        guard headers.contains(.expect) else { return .none }
        var found = Expectation.none
        for line in headers.values(.expect) {
            for member in line.split(separator: ",", omittingEmptySubsequences: false) {
                let text = String(member).trimmingOWS()
                if text.isEmpty { continue }
                guard text.lowercased() == "100-continue" else { return .unsupported(text) }
                found = .continueFirst
            }
        }
        return found
    }

    /// Whether the client sent `Expect: 100-continue`.
    public var expectsContinue: Bool { headers.contains(.expect) && expectation == .continueFirst }

    /// Whether to answer `100 Continue` before reading the body: never to an HTTP/1.0 client,
    /// whose expectation is ignored (RFC 9110 §10.1.1) and which gets no 1xx (§15.2).
    public var getsContinue: Bool { minorVersion > 0 && expectsContinue }

    /// The request line as a log shows it.
    public var requestLine: String { "\(method) \(rawTarget) HTTP/1.\(minorVersion)" }
}
