import EventIO
import Logging

/// The TLS passthrough windows (`GET|DELETE /tls/passthrough`, and `tls.passthrough` in `/stats`).
extension AdminRoutes {
    /// The blind windows in force: host, client address, its TLS fingerprint, and when the
    /// window started and ends (seconds since the epoch).
    func passthroughList() -> JSONValue {
        guard let interceptor = proxy.interceptor else { return .array([]) }
        let monotonic = Double(EventLoop.monotonicNanoseconds()) / 1e9
        let wall = proxy.clock()
        return .array(
            interceptor.passthrough.entries(now: monotonic).map { entry in
                .object([
                    ("host", .string(entry.key.host)), ("client", .string(entry.key.client)),
                    ("fingerprint", .string(entry.key.fingerprint)),
                    ("since", .double((wall + entry.since - monotonic).rounded())),
                    ("until", .double((wall + entry.until - monotonic).rounded())),
                    ("remaining_seconds", .number(Int((entry.until - monotonic).rounded(.up)))),
                ])
            })
    }

    /// Ends the blind windows for `host` (all without one).
    func clearPassthrough(host: String?) -> Answer {
        guard let interceptor = proxy.interceptor else {
            return .error(409, "TLS interception is off (tls.intercept is empty)")
        }
        let ended = interceptor.clearPassthrough(host: host)
        proxy.logger.notice(
            "the admin API ended \(ended) TLS passthrough window(s)\(host.map { " for \($0)" } ?? ""): those clients are intercepted again"
        )
        return .json(200, .object([("cleared", .number(ended))]))
    }
}
