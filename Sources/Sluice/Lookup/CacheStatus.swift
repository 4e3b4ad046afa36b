/// What the cache did for one response, as the `Cache-Status` field says it (RFC 9211) with
/// Sluice as the cache's name: `Sluice; hit; ttl=42`, `Sluice; fwd=uri-miss; stored`,
/// `Sluice; fwd=stale; fwd-status=304`. The machine decides it, delivery adds what storing did,
/// and every reader (the header, the access log, `/events`, the metrics) reads this one value.
public struct CacheStatus: Sendable, Equatable, CustomStringConvertible {
    /// The cache's name in the field.
    public static let cacheName: StaticString = "Sluice"

    /// Served from the cache, or forwarded (RFC 9211 §2.1, §2.2).
    public enum Outcome: Sendable, Equatable {
        /// Served from the cache; `ttl` seconds of freshness left (negative when stale, §2.5).
        case hit(ttl: Int64)
        /// Forwarded, and why (`fwd=`): ``Forward``.
        case forward(Forward)
        /// Answered from a recording (`--replay`): `hit; detail=replay`.
        case replay
    }

    /// Why a request went to the origin (`fwd=`, RFC 9211 §2.2).
    public enum Forward: String, Sendable, Equatable {
        /// The cache was not consulted: the method is not cacheable.
        case bypass
        /// The method is not one the cache stores (`fwd=method`).
        case method
        /// The request said not to use a stored response (`no-store`, `no-cache`).
        case request
        /// A stored response was found but could not be used without revalidation.
        case stale
        /// Nothing stored for the URL.
        case uriMiss = "uri-miss"
        /// Something stored for the URL, but not for this variant (`Vary`).
        case varyMiss = "vary-miss"
        /// Not in the cache (a reason not given more precisely).
        case miss
    }

    /// Hit or forward.
    public var outcome: Outcome
    /// The origin's status when it was asked (`fwd-status=`, §2.3); only given when it differs
    /// from the status the client got, e.g. a 304 to a revalidation.
    public var forwardStatus: Int?
    /// The response came from another client's fetch of the same URL (collapsed forwarding).
    public var collapsed = false
    /// The response is being stored (§2.6).
    public var stored = false
    /// More about what happened (`detail=`, §2.8): `stale-while-revalidate`, `only-if-cached`, a
    /// reason it was not stored …
    public var detail: String?

    /// - Parameters:
    ///   - outcome: hit or forward.
    ///   - forwardStatus: the origin's status, `nil` by default.
    ///   - collapsed: taken from another client's fetch, `false` by default.
    ///   - detail: `detail=`, `nil` by default.
    public init(_ outcome: Outcome, forwardStatus: Int? = nil, collapsed: Bool = false, detail: String? = nil) {
        self.outcome = outcome
        self.forwardStatus = forwardStatus
        self.collapsed = collapsed
        self.detail = detail
    }

    /// A forwarded response: `fwd=reason`.
    public static func forward(_ reason: Forward, detail: String? = nil) -> CacheStatus {
        CacheStatus(.forward(reason), detail: detail)
    }

    /// Whether it was served from the cache.
    public var isHit: Bool {
        if case .hit = outcome { return true }
        return false
    }

    /// Whether a recording answered.
    public var isReplay: Bool { outcome == .replay }

    /// The field value.
    public var description: String {
        var bytes: [UInt8] = []
        bytes.append(atMost: byteBound) { write(into: &$0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// At most this many bytes make the field value: the name, the longest outcome with its
    /// parameters (a `fwd-status` or `ttl` of any `Int64`) and the detail.
    var byteBound: Int { 96 + (detail?.utf8.count ?? 0) }

    /// The field value written into `out` (at most ``byteBound`` bytes; a client's head and a
    /// hit's are written with it, no `String`s).
    func write(into out: inout ByteWriter) {
        out.put(Self.cacheName)
        switch outcome {
        case .hit(let ttl):
            out.put("; hit; ttl=")
            out.putDecimal(ttl)
        case .forward(let reason):
            out.put("; fwd=")
            out.put(reason.rawValue)
            if let forwardStatus {
                out.put("; fwd-status=")
                out.putDecimal(Int64(forwardStatus))
            }
        case .replay:
            out.put("; hit; detail=replay")
            return
        }
        if collapsed { out.put("; collapsed") }
        if stored { out.put("; stored") }
        if let detail {
            out.put("; detail=")
            out.put(detail)
        }
    }

    /// One word for the metrics: `hit`, `miss` (stored or not), `stale` (revalidated),
    /// `collapsed`, `stale_if_error`, or `bypass` (responses the cache took no part in).
    public var summary: String {
        if isHit { return "hit" }
        if isReplay { return "replay" }
        if detail == "stale-if-error" { return "stale_if_error" }
        if collapsed { return "collapsed" }
        switch outcome {
        case .forward(.stale): return "stale"
        case .forward(.method), .forward(.request), .forward(.bypass): return "bypass"
        case .hit, .forward, .replay: return "miss"
        }
    }
}
