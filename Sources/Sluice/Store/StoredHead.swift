/// A stored response's head as every part of the cache keeps it: the file (``CacheStore/Entry``),
/// a response being written (``CacheStore/NewEntry``, ``CacheWriter``) and the shared tier
/// (``SharedRecord``). The request it answers (its key, and the variant its `Vary`'d fields
/// chose), its status line and header fields (hop-by-hop fields removed), when it was requested
/// and received (RFC 9111 §4.2.3 ages it from these), and a rule's lifetime.
struct StoredHead: Equatable {
    /// The cache key: the URL as requested (``CacheStore/piecesKey(_:)`` for a `206`).
    var key: String
    /// The values of the request fields ``varyNames`` names, as the variant is chosen by.
    var variant: String
    var varyNames: [String]
    var status: Int
    var reason: String
    var headers: HTTPFields
    /// When the request went upstream and when its response arrived (seconds since the epoch).
    var requestTime: Double
    var responseTime: Double
    /// A freshness lifetime given by the will-cache hook (a rule's `cache.ttl`), in seconds;
    /// `nil` until it is committed with one.
    var ttl: Int64? = nil

    /// The status line and header fields as a response head.
    var response: ResponseHead { ResponseHead(status: status, reason: reason, headers: headers) }
}

/// Something that keeps a ``StoredHead`` (an entry of the file, a response being written, a
/// record of the shared tier): its parts read through it.
protocol KeepsStoredHead {
    var stored: StoredHead { get }
}

extension KeepsStoredHead {
    var key: String { stored.key }
    var variant: String { stored.variant }
    /// The request fields the variant was chosen by.
    var varyNames: [String] { stored.varyNames }
    var status: Int { stored.status }
    var reason: String { stored.reason }
    var headers: HTTPFields { stored.headers }
    var requestTime: Double { stored.requestTime }
    var responseTime: Double { stored.responseTime }
    /// A freshness lifetime given by the will-cache hook (a rule's `cache.ttl`), in seconds.
    var ttl: Int64? { stored.ttl }
    /// The stored status line and header fields.
    var head: ResponseHead { stored.response }
}
