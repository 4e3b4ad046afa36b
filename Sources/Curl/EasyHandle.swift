import CCurl
import EventIO

#if canImport(Glibc)
    import Glibc
#endif

/// Receives one transfer's callbacks on the loop thread and answers with an action.
public protocol EasyHandleDelegate: AnyObject {
    /// One header line of the response, status lines of interim (1xx) responses included,
    /// with its CRLF; an empty line (`"\r\n"`) ends each header block.
    func easyHandle(_ handle: EasyHandle, didReceiveHeaderLine line: UnsafeRawBufferPointer) -> EasyHandle.Action
    /// A piece of the response body (transfer coding removed; content coding kept).
    func easyHandle(_ handle: EasyHandle, didReceiveBody bytes: UnsafeRawBufferPointer) -> EasyHandle.Action
    /// Fill `buffer` with request-body bytes.
    func easyHandle(_ handle: EasyHandle, fillUploadBuffer buffer: UnsafeMutableRawBufferPointer)
        -> EasyHandle
        .UploadResult
    /// Whether a connection to `address` may be opened (loop prevention, address policy).
    func easyHandle(_ handle: EasyHandle, mayConnectTo address: SocketAddress) -> Bool
}

/// One libcurl transfer (`CURL *`), reusable after ``reset()``.
/// - SeeAlso: `curl_easy_init(3)`, `curl_easy_setopt(3)`.
public final class EasyHandle {
    /// A callback's answer.
    public enum Action: Sendable {
        /// Keep going.
        case proceed
        /// Stop delivering until ``unpause()`` (body callbacks only); the bytes are delivered again.
        case pause
        /// Stop the transfer; it completes with an aborted error.
        case abort
    }

    /// What ``EasyHandleDelegate/easyHandle(_:fillUploadBuffer:)`` produced.
    public enum UploadResult: Sendable {
        /// This many bytes were written into the buffer.
        case bytes(Int)
        /// The request body is complete.
        case end
        /// Nothing yet; call ``unpause()`` when there is.
        case pause
        /// Stop the transfer.
        case abort
    }

    /// How the request body is framed upstream.
    public enum RequestBody: Sendable, Equatable {
        /// No body.
        case none
        /// Exactly this many bytes (sent with Content-Length).
        case length(Int64)
        /// An unknown length (chunked on HTTP/1.1).
        case streamed
    }

    /// Which HTTP versions to offer the origin.
    public enum HTTPVersion: Sendable {
        /// HTTP/1.1 only.
        case http1_1
        /// HTTP/2 where TLS negotiates it (ALPN), else HTTP/1.1.
        case http2OverTLS
    }

    let handle: UnsafeMutableRawPointer
    /// Receives the transfer's callbacks; not retained.
    public weak var delegate: (any EasyHandleDelegate)?
    var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    private var headers: HeaderList?
    /// Whether the handle is in a ``MultiHandle`` right now.
    public internal(set) var isActive = false
    /// Set when the transfer is paused in either direction.
    private var pausedMask: Int32 = 0
    /// Whether the transfer is paused in either direction (libcurl then stops watching its socket).
    var isPaused: Bool { pausedMask != 0 }
    /// What closes the sockets of this handle's connections (``MultiHandle/add(_:)`` sets it).
    var closer: SocketCloser?
    private var hasRequestTarget = false

    /// A fresh handle with Sluice's baseline options.
    public init() {
        Curl.initialise()
        handle = curl_easy_init()!
        installBaseline()
    }

    deinit { curl_easy_cleanup(handle) }

    /// Readies the handle for another transfer without `curl_easy_reset`: the baseline and
    /// callbacks stay, the per-transfer options (method, body, headers) go back to a plain GET.
    public func prepareForReuse() {
        set(CURLOPT_HTTPGET, 1)
        sluice_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, nil)
        if hasRequestTarget {
            sluice_easy_setopt_string(handle, CURLOPT_REQUEST_TARGET, nil)
            hasRequestTarget = false
        }
        sluice_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, nil)
        headers = nil
        if hasCustomTrust { resetTrust() }
        if hasProxy {
            sluice_easy_setopt_string(handle, CURLOPT_PROXY, "")
            sluice_easy_setopt_string(handle, CURLOPT_NOPROXY, "*")
            // Back to libcurl's own CA bundle for the next parent (as resetTrust does for origins).
            if let file = EasyHandle.defaultCA.file {
                _ = file.withCString { sluice_easy_setopt_string(handle, CURLOPT_PROXY_CAINFO, $0) }
            }
            hasProxy = false
        }
        pausedMask = 0
        errorBuffer[0] = 0
    }

    private func installBaseline() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        set(CURLOPT_PRIVATE, pointer: context)
        set(CURLOPT_ERRORBUFFER, pointer: &errorBuffer)
        // Never read http_proxy or no_proxy from the environment: Sluice's own traffic must not
        // loop back (and libcurl then skips two getenv calls per transfer).
        sluice_easy_setopt_string(handle, CURLOPT_PROXY, "")
        sluice_easy_setopt_string(handle, CURLOPT_NOPROXY, "*")
        set(CURLOPT_FOLLOWLOCATION, 0)
        // The path goes upstream as the client wrote it: libcurl would resolve "/a/../b" to "/b",
        // which a proxy must not do (RFC 9110 §7.7), and a rule matched on the path the client
        // sent would not be the path the origin saw.
        set(CURLOPT_PATH_AS_IS, 1)
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_TCP_NODELAY, 1)
        set(CURLOPT_HTTP_TRANSFER_DECODING, 1)
        set(CURLOPT_HTTP_CONTENT_DECODING, 0)
        set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        sluice_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        sluice_easy_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        sluice_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
        sluice_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        sluice_easy_setopt_pointer(handle, CURLOPT_READDATA, context)
        sluice_easy_setopt_pointer(handle, CURLOPT_OPENSOCKETDATA, context)
        sluice_easy_setopt_write_cb(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            let owner = Unmanaged<EasyHandle>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            guard let delegate = owner.delegate else { return 0 }
            switch delegate.easyHandle(owner, didReceiveHeaderLine: UnsafeRawBufferPointer(start: data, count: length))
            {
            case .proceed, .pause: return length
            case .abort: return 0
            }
        }
        sluice_easy_setopt_write_cb(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let owner = Unmanaged<EasyHandle>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            guard let delegate = owner.delegate else { return 0 }
            switch delegate.easyHandle(owner, didReceiveBody: UnsafeRawBufferPointer(start: data, count: length)) {
            case .proceed: return length
            case .pause:
                owner.pausedMask |= CURLPAUSE_RECV
                return Int(CURL_WRITEFUNC_PAUSE)
            case .abort: return 0
            }
        }
        sluice_easy_setopt_read_cb(handle, CURLOPT_READFUNCTION) { data, size, count, context in
            let owner = Unmanaged<EasyHandle>.fromOpaque(context!).takeUnretainedValue()
            guard let delegate = owner.delegate else { return Int(CURL_READFUNC_ABORT) }
            let buffer = UnsafeMutableRawBufferPointer(start: data, count: size * count)
            switch delegate.easyHandle(owner, fillUploadBuffer: buffer) {
            case .bytes(let written): return written
            case .end: return 0
            case .pause:
                owner.pausedMask |= CURLPAUSE_SEND
                return Int(CURL_READFUNC_PAUSE)
            case .abort: return Int(CURL_READFUNC_ABORT)
            }
        }
        sluice_easy_setopt_opensocket_cb(handle, CURLOPT_OPENSOCKETFUNCTION) { context, purpose, address in
            guard let context, let address else { return -1 }
            let owner = Unmanaged<EasyHandle>.fromOpaque(context).takeUnretainedValue()
            let info = address.pointee
            let peer = withUnsafePointer(to: &address.pointee.addr) {
                SocketAddress(cAddress: UnsafeRawPointer($0), length: Int(info.addrlen))
            }
            if let peer, let delegate = owner.delegate, !delegate.easyHandle(owner, mayConnectTo: peer) {
                return -1
            }
            let fd = socket(info.family, info.socktype | Int32(SOCK_CLOEXEC.rawValue), info.protocol)
            if fd >= 0 { owner.closer?.opened(fd) }
            return fd
        }
    }

    // MARK: - Options

    private func set(_ option: CURLoption, _ value: Int) { sluice_easy_setopt_long(handle, option, value) }
    private func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) {
        sluice_easy_setopt_pointer(handle, option, pointer)
    }

    /// Sends `target` in the request line instead of the URL's path (`*` for a server-wide
    /// `OPTIONS`); reset by ``prepareForReuse()``. - SeeAlso: `CURLOPT_REQUEST_TARGET`.
    public func setRequestTarget(_ target: String) {
        _ = target.withCString { sluice_easy_setopt_string(handle, CURLOPT_REQUEST_TARGET, $0) }
        hasRequestTarget = true
    }

    /// Whether ``setProxy(_:)`` set a parent (a recycled handle forgets it).
    var hasProxy = false

    /// The absolute URL to fetch. - SeeAlso: `CURLOPT_URL`.
    public func setURL(_ url: String) { _ = url.withCString { sluice_easy_setopt_string(handle, CURLOPT_URL, $0) } }

    // MARK: - Origin trust

    /// Whether ``setTrust(caFile:pins:verify:minimumVersion:)`` changed the defaults.
    private var hasCustomTrust = false

    /// libcurl's built-in CA bundle and directory (read once: `CURLINFO_CAINFO`, `CURLINFO_CAPATH`).
    private static let defaultCA: (file: String?, path: String?) = {
        guard let probe = curl_easy_init() else { return (nil, nil) }
        defer { curl_easy_cleanup(probe) }
        var file: UnsafeMutablePointer<CChar>?
        var path: UnsafeMutablePointer<CChar>?
        sluice_easy_getinfo_string(probe, CURLINFO_CAINFO, &file)
        sluice_easy_getinfo_string(probe, CURLINFO_CAPATH, &path)
        return (file.map { String(cString: $0) }, path.map { String(cString: $0) })
    }()

    /// Minimum TLS version offered to the origin.
    public enum TLSVersion: Sendable { case tls12, tls13 }

    /// How this transfer trusts the origin's certificate: `caFile` replaces the system store,
    /// `pins` (`sha256//…;sha256//…`) are checked on every new connection, `verify: false` checks
    /// nothing (a rule's explicit choice). Options go back to the defaults when the handle is reused.
    /// - SeeAlso: `CURLOPT_CAINFO`, `CURLOPT_PINNEDPUBLICKEY`, `CURLOPT_SSL_VERIFYPEER`,
    ///   `CURLOPT_SSL_VERIFYHOST`, `CURLOPT_SSLVERSION`.
    /// `clientCertificate`: a PEM file with the certificate to send an origin that asks for one
    /// (`clientKey`: its key's PEM file, else the same file).
    /// - SeeAlso: `CURLOPT_SSLCERT`, `CURLOPT_SSLKEY`.
    public func setTrust(
        caFile: String?, pins: String?, verify: Bool, minimumVersion: TLSVersion?, clientCertificate: String? = nil,
        clientKey: String? = nil
    ) {
        hasCustomTrust = true
        if let clientCertificate {
            _ = clientCertificate.withCString { sluice_easy_setopt_string(handle, CURLOPT_SSLCERT, $0) }
            _ = (clientKey ?? clientCertificate).withCString { sluice_easy_setopt_string(handle, CURLOPT_SSLKEY, $0) }
        }
        if let caFile {
            _ = caFile.withCString { sluice_easy_setopt_string(handle, CURLOPT_CAINFO, $0) }
            sluice_easy_setopt_string(handle, CURLOPT_CAPATH, nil)
        }
        if let pins { _ = pins.withCString { sluice_easy_setopt_string(handle, CURLOPT_PINNEDPUBLICKEY, $0) } }
        set(CURLOPT_SSL_VERIFYPEER, verify ? 1 : 0)
        set(CURLOPT_SSL_VERIFYHOST, verify ? 2 : 0)
        switch minimumVersion {
        case .tls12: set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
        case .tls13: set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_3))
        case nil: break
        }
    }

    private func resetTrust() {
        hasCustomTrust = false
        let defaults = EasyHandle.defaultCA
        if let file = defaults.file {
            _ = file.withCString { sluice_easy_setopt_string(handle, CURLOPT_CAINFO, $0) }
        }
        if let path = defaults.path {
            _ = path.withCString { sluice_easy_setopt_string(handle, CURLOPT_CAPATH, $0) }
        }
        sluice_easy_setopt_string(handle, CURLOPT_PINNEDPUBLICKEY, nil)
        sluice_easy_setopt_string(handle, CURLOPT_SSLCERT, nil)
        sluice_easy_setopt_string(handle, CURLOPT_SSLKEY, nil)
        set(CURLOPT_SSL_VERIFYPEER, 1)
        set(CURLOPT_SSL_VERIFYHOST, 2)
        set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_DEFAULT))
    }

    /// The request method and how its body is framed.
    /// `HEAD` sets `CURLOPT_NOBODY`; any body uses upload mode with `CURLOPT_CUSTOMREQUEST`.
    /// - SeeAlso: `CURLOPT_CUSTOMREQUEST`, `CURLOPT_UPLOAD`, `CURLOPT_INFILESIZE_LARGE`, `CURLOPT_NOBODY`.
    public func setMethod(_ method: String, body: RequestBody) {
        switch body {
        case .none:
            if method == "HEAD" {
                set(CURLOPT_NOBODY, 1)
            } else if method != "GET" {
                _ = method.withCString { sluice_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, $0) }
            }
        case .length(let count):
            set(CURLOPT_UPLOAD, 1)
            sluice_easy_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(count))
            _ = method.withCString { sluice_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, $0) }
        case .streamed:
            set(CURLOPT_UPLOAD, 1)
            sluice_easy_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, -1)
            _ = method.withCString { sluice_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, $0) }
        }
    }

    /// Request header lines, kept alive with the handle. - SeeAlso: `CURLOPT_HTTPHEADER`.
    public func setHeaders(_ list: HeaderList) {
        headers = list
        sluice_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list.list)
    }

    /// The size of libcurl's receive buffer for the next transfer (how much one read may bring;
    /// the body still arrives in pieces of at most 16 KiB). - SeeAlso: `CURLOPT_BUFFERSIZE`.
    public func setReceiveBuffer(bytes: Int) { set(CURLOPT_BUFFERSIZE, bytes) }

    /// HTTP versions offered to the origin. - SeeAlso: `CURLOPT_HTTP_VERSION`.
    public func setHTTPVersion(_ version: HTTPVersion) {
        switch version {
        case .http1_1: set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        case .http2OverTLS: set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        }
    }

    /// Time limits: connect, and the slowest acceptable transfer (`lowSpeedSeconds` of under
    /// one byte per second aborts; paused time does not count). - SeeAlso: `CURLOPT_CONNECTTIMEOUT_MS`,
    /// `CURLOPT_LOW_SPEED_TIME`.
    public func setTimeouts(connectMilliseconds: Int, lowSpeedSeconds: Int) {
        set(CURLOPT_CONNECTTIMEOUT_MS, connectMilliseconds)
        if lowSpeedSeconds > 0 {
            set(CURLOPT_LOW_SPEED_LIMIT, 1)
            set(CURLOPT_LOW_SPEED_TIME, lowSpeedSeconds)
        }
    }

    // MARK: - Pausing

    /// Resumes a transfer paused by a callback's `.pause`. - SeeAlso: `curl_easy_pause(3)`.
    /// libcurl may call the body callback again before this returns.
    public func unpause() {
        guard pausedMask != 0 else { return }
        pausedMask = 0
        curl_easy_pause(handle, CURLPAUSE_CONT)
    }

    /// The socket the current transfer uses, as the multi handle's socket callback last said
    /// (-1: none yet).
    var transferSocket: Int32 = -1

}
