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

    /// Resolves `host` (a name, or an address literal) without blocking the loop: `completion`
    /// runs on the loop with its first address, or the resolver's error code (see
    /// ``describe(_:)``). - SeeAlso: `evdns_getaddrinfo(3)`.
    public func resolve(_ host: String, completion: @escaping (Result<SocketAddress, ResolveError>) -> Void) {
        resolveAll(host) { result in completion(result.map { $0[0] }) }
    }

    /// Resolves `host` like ``resolve(_:completion:)``, with every address it has (in the
    /// resolver's order, duplicates removed): a caller tries the next when one refuses.
    public func resolveAll(_ host: String, completion: @escaping (Result<[SocketAddress], ResolveError>) -> Void) {
        final class Request {
            let completion: (Result<[SocketAddress], ResolveError>) -> Void
            init(_ completion: @escaping (Result<[SocketAddress], ResolveError>) -> Void) {
                self.completion = completion
            }
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        let request = Unmanaged.passRetained(Request(completion)).toOpaque()
        // The callback may run before this returns (a literal, /etc/hosts); the request is released there.
        _ = evdns_getaddrinfo(
            base, host, nil, &hints,
            { code, info, argument in
                let request = Unmanaged<Request>.fromOpaque(argument!).takeRetainedValue()
                defer { if let info { evutil_freeaddrinfo(info) } }
                var addresses: [SocketAddress] = []
                var next = code == 0 ? info : nil
                while let entry = next {
                    if let address = entry.pointee.ai_addr,
                        let parsed = SocketAddress(cAddress: address, length: Int(entry.pointee.ai_addrlen)),
                        !addresses.contains(parsed)
                    {
                        addresses.append(parsed)
                    }
                    next = entry.pointee.ai_next
                }
                guard !addresses.isEmpty else {
                    return request.completion(.failure(ResolveError(code: code == 0 ? EVUTIL_EAI_FAIL : code)))
                }
                request.completion(.success(addresses))
            }, request)
    }

    /// A name that did not resolve: the resolver's code, and its message.
    public struct ResolveError: Error, CustomStringConvertible, Sendable {
        public let code: Int32
        public var description: String { DNSResolver.describe(code) }
    }

    /// The message for a resolver error code.
    public static func describe(_ code: Int32) -> String { String(cString: evutil_gai_strerror(code)) }
}
