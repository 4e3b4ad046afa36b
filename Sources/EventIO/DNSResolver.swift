import CEvent

/// An asynchronous resolver on the loop (libevent's evdns), reading `/etc/resolv.conf` and `/etc/hosts`.
/// - SeeAlso: `evdns_base_new(3)`.
public final class DNSResolver {
    let base: OpaquePointer?

    /// Creates a resolver with the system's name servers.
    public init(loop: EventLoop) {
        base = evdns_base_new(loop.base, EVDNS_BASE_INITIALIZE_NAMESERVERS)
    }

    deinit { if let base { evdns_base_free(base, 1) } }

    /// The message for a resolver error code.
    public static func describe(_ code: Int32) -> String { String(cString: evutil_gai_strerror(code)) }
}
