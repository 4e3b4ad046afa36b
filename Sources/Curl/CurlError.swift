import CCurl

/// A failed libcurl call or transfer: the `CURLcode` (or `CURLMcode`) and libcurl's own words.
public struct CurlError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of failure this is, in terms a proxy cares about.
    public enum Kind: Sendable, Equatable {
        /// The name did not resolve (`CURLE_COULDNT_RESOLVE_HOST`).
        case resolve
        /// TCP connect failed or was refused by the connection filter (`CURLE_COULDNT_CONNECT`).
        case connect
        /// A time limit passed (`CURLE_OPERATION_TIMEDOUT`).
        case timeout
        /// TLS handshake failure.
        case tls
        /// The origin's certificate failed verification: chain, validity or name (`CURLE_PEER_FAILED_VERIFICATION`).
        case certificate
        /// The origin's public key is not one of the pins (`CURLE_SSL_PINNEDPUBKEYNOTMATCH`).
        case pinMismatch
        /// The peer closed or reset the connection, or sent less than it announced.
        case receive
        /// Sending failed.
        case send
        /// The peer's response was not valid HTTP.
        case protocolViolation
        /// The URL was rejected by libcurl.
        case badURL
        /// The transfer was stopped by this program (a callback returned abort).
        case aborted
        /// Anything else.
        case other
    }

    /// The raw `CURLcode` (or `CURLMcode` for multi errors).
    public let code: Int32
    /// libcurl's error-buffer text, or `curl_easy_strerror` when that is empty.
    public let message: String

    init(code: CURLcode, detail: String = "") {
        self.code = Int32(code.rawValue)
        let text = String(cString: curl_easy_strerror(code))
        message = detail.isEmpty ? text : detail
    }

    init(multiCode: CURLMcode) {
        code = Int32(multiCode.rawValue)
        message = String(cString: curl_multi_strerror(multiCode))
    }

    /// A failure in the proxy handshake (`CURLE_PROXY`: SOCKS or the HTTPS proxy's TLS).
    public var isProxyError: Bool { code == Int32(CURLE_PROXY.rawValue) }

    /// The category of this failure.
    public var kind: Kind {
        switch CURLcode(rawValue: UInt32(code)) {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: return .resolve
        case CURLE_COULDNT_CONNECT: return .connect
        case CURLE_OPERATION_TIMEDOUT: return .timeout
        case CURLE_PEER_FAILED_VERIFICATION: return .certificate
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH: return .pinMismatch
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE:
            return .tls
        case CURLE_RECV_ERROR, CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_HTTP2_STREAM, CURLE_HTTP2:
            return .receive
        case CURLE_SEND_ERROR: return .send
        case CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING: return .protocolViolation
        case CURLE_URL_MALFORMAT: return .badURL
        case CURLE_UNSUPPORTED_PROTOCOL: return .protocolViolation
        case CURLE_WRITE_ERROR, CURLE_ABORTED_BY_CALLBACK, CURLE_READ_ERROR: return .aborted
        default: return .other
        }
    }

    /// `CURLE_OUT_OF_MEMORY`, which libcurl 7.88 also reports for a response header section it
    /// refuses to buffer (over 100 KiB: `CURL_MAX_HTTP_HEADER`).
    public var isOutOfMemory: Bool { code == Int32(CURLE_OUT_OF_MEMORY.rawValue) }

    public var description: String { "curl error \(code): \(message)" }
}
