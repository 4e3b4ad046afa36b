/// The hooks one upstream task runs with (Alamofire's per-request interceptors), merged in one place.
extension UpstreamTask {
    /// Per-task hooks (a rule's handlers override the session's). A class whose hooks never
    /// change: every task is handed its hooks, and a reference is one retain where three optional
    /// existentials were copied (and compared with `nil`) through their witness tables.
    public final class Hooks: Sendable {
        public let redirectHandler: (any RedirectHandler)?
        public let responseHandler: (any ResponseHandler)?
        public let cachedResponseHandler: (any CachedResponseHandler)?
        /// Whether no hook is set (decided once, here).
        public let isEmpty: Bool

        /// No hooks at all (named so as not to be read as an optional's `.none`).
        public static let empty = Hooks()

        public init(
            redirectHandler: (any RedirectHandler)? = nil, responseHandler: (any ResponseHandler)? = nil,
            cachedResponseHandler: (any CachedResponseHandler)? = nil
        ) {
            self.redirectHandler = redirectHandler
            self.responseHandler = responseHandler
            self.cachedResponseHandler = cachedResponseHandler
            isEmpty = redirectHandler == nil && responseHandler == nil && cachedResponseHandler == nil
        }

        /// These hooks, with `fallback`'s where these have none: the one place where the levels
        /// (the proxy's own, a rule's, the session's) are merged.
        public func merging(_ fallback: Hooks) -> Hooks {
            if fallback.isEmpty { return self }
            if isEmpty { return fallback }
            return Hooks(
                redirectHandler: redirectHandler ?? fallback.redirectHandler,
                responseHandler: responseHandler ?? fallback.responseHandler,
                cachedResponseHandler: cachedResponseHandler ?? fallback.cachedResponseHandler)
        }
    }
}
