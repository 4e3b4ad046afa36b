/// What would be stored for a completed response: the proposal the will-cache hook sees.
public struct CachedResponseProposal: Sendable, Equatable {
    /// The request that produced the response.
    public var request: UpstreamRequest
    /// The response head as received.
    public var response: ResponseHead
    /// Body bytes received (the origin's bytes, content coding kept).
    public var bodyBytes: Int64
    /// A freshness lifetime in seconds to keep instead of the one RFC 9111 gives the response;
    /// `nil` = the RFC's. Shown as `detail=ttl-override` in `Cache-Status` when the entry is served.
    public var lifetime: Int64?

    public init(request: UpstreamRequest, response: ResponseHead, bodyBytes: Int64, lifetime: Int64? = nil) {
        self.request = request
        self.response = response
        self.bodyBytes = bodyBytes
        self.lifetime = lifetime
    }
}

/// What the will-cache hook said about a complete response (``UpstreamTask/cachingDecision``).
public enum CachingDecision: Sendable, Equatable {
    /// No hook ran: the response is stored as admitted.
    case notAsked
    /// The hook refused: nothing is stored.
    case doNotStore
    /// Store this proposal (the hook may have changed its header fields or given a lifetime).
    case store(CachedResponseProposal)
}

/// Decides, before admission, whether and what to store (the will-cache hook).
public protocol CachedResponseHandler: Sendable {
    /// - Returns: the proposal to store (as given or changed), or `nil` to store nothing.
    func task(_ task: UpstreamTask, willCache proposal: CachedResponseProposal) -> CachedResponseProposal?
}

/// The default ``CachedResponseHandler``: cache, modify or do not cache.
public struct ResponseCacher: CachedResponseHandler {
    /// The choices.
    public enum Behavior: Sendable {
        /// Store the proposal as it is.
        case cache
        /// Store nothing.
        case doNotCache
        /// Change (or drop, with `nil`) the proposal.
        case modify(@Sendable (UpstreamTask, CachedResponseProposal) -> CachedResponseProposal?)
    }

    /// Stores proposals as they are.
    public static let cache = ResponseCacher(behavior: .cache)
    /// Stores nothing.
    public static let doNotCache = ResponseCacher(behavior: .doNotCache)

    /// This cacher's behavior.
    public let behavior: Behavior

    public init(behavior: Behavior) { self.behavior = behavior }

    public func task(_ task: UpstreamTask, willCache proposal: CachedResponseProposal) -> CachedResponseProposal? {
        switch behavior {
        case .cache: proposal
        case .doNotCache: nil
        case .modify(let change): change(task, proposal)
        }
    }
}
