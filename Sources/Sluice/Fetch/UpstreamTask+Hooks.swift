/// The hooks one upstream task runs with (Alamofire's per-request interceptors), merged in one place.
extension UpstreamTask {
    /// Per-task hooks (a rule's handlers override the session's).
    public struct Hooks: Sendable {
        public var redirectHandler: (any RedirectHandler)?
        public var responseHandler: (any ResponseHandler)?
        public var cachedResponseHandler: (any CachedResponseHandler)?
        public init(
            redirectHandler: (any RedirectHandler)? = nil, responseHandler: (any ResponseHandler)? = nil,
            cachedResponseHandler: (any CachedResponseHandler)? = nil
        ) {
            self.redirectHandler = redirectHandler
            self.responseHandler = responseHandler
            self.cachedResponseHandler = cachedResponseHandler
        }

        /// Whether no hook is set.
        public var isEmpty: Bool { redirectHandler == nil && responseHandler == nil && cachedResponseHandler == nil }

        /// These hooks, with `fallback`'s where these have none: the one place where the levels
        /// (the proxy's own, a rule's, the session's) are merged.
        public func merging(_ fallback: Hooks) -> Hooks {
            Hooks(
                redirectHandler: redirectHandler ?? fallback.redirectHandler,
                responseHandler: responseHandler ?? fallback.responseHandler,
                cachedResponseHandler: cachedResponseHandler ?? fallback.cachedResponseHandler)
        }
    }
}
