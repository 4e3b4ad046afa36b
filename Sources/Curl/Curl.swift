import CCurl
import Synchronization

/// Process-wide libcurl facts and one-time initialisation.
/// - SeeAlso: `curl_global_init(3)`, `curl_version_info(3)`.
public enum Curl {
    private static let initialised = Mutex(false)

    /// Calls `curl_global_init` once per process; every handle initialiser calls it.
    public static func initialise() {
        initialised.withLock { done in
            guard !done else { return }
            curl_global_init(Int(CURL_GLOBAL_ALL))
            done = true
        }
    }

    /// libcurl's version text, e.g. `"8.5.0"`.
    public static var version: String {
        guard let info = curl_version_info(CURLVERSION_TENTH), let text = info.pointee.version else { return "?" }
        return String(cString: text)
    }

    /// Whether this libcurl speaks HTTP/2 (nghttp2).
    public static var supportsHTTP2: Bool {
        guard let info = curl_version_info(CURLVERSION_TENTH) else { return false }
        return info.pointee.features & CURL_VERSION_HTTP2 != 0
    }
}
