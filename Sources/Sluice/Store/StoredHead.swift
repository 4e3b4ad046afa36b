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
