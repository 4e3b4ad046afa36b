/// Decides what happens when an upstream response is a redirect (the redirect hook).
///
/// Answer with the request to send next (``RedirectDecision/follow(_:)``), ``RedirectDecision/pass``
/// to hand the 3xx to the client, or ``RedirectDecision/refuse(_:)`` to fail the exchange.
public protocol RedirectHandler: Sendable {
    /// - Parameters:
    ///   - task: the upstream task being redirected.
    ///   - request: the request Sluice would send next (method and fields already rewritten per RFC 9110 §15.4), or
    ///     the failure that following would meet (limit, cycle, downgrade).
    ///   - response: the 3xx response.
    func task(
        _ task: UpstreamTask, willBeRedirectedTo request: Result<UpstreamRequest, SluiceError>,
        for response: ResponseHead
    ) -> RedirectDecision
}

/// The redirect hook's answer.
public enum RedirectDecision: Sendable, Equatable {
    /// The client receives the 3xx as it is.
    case pass
    /// Send this request next.
    case follow(UpstreamRequest)
    /// Fail the exchange with this error.
    case refuse(SluiceError)
}

/// The default ``RedirectHandler``: pass, follow, rewrite or refuse.
public struct Redirector: RedirectHandler {
    /// The choices.
    public enum Behavior: Sendable {
        /// The client sees the 3xx (the default).
        case pass
        /// Follow, within the task's limit, refusing cycles and https → http.
        case follow
        /// Let a closure choose the next request (`nil` passes the 3xx through).
        case rewrite(@Sendable (UpstreamRequest, ResponseHead) -> UpstreamRequest?)
        /// Every redirect fails with 502.
        case refuse
    }

    /// Passes redirects to the client.
    public static let pass = Redirector(behavior: .pass)
    /// Follows redirects.
    public static let follow = Redirector(behavior: .follow)
    /// Refuses redirects.
    public static let refuse = Redirector(behavior: .refuse)

    /// This redirector's behavior.
    public let behavior: Behavior

    /// A redirector with `behavior`.
    public init(behavior: Behavior) { self.behavior = behavior }

    /// The redirector for a configured policy.
    public init(policy: Configuration.RedirectPolicy) {
        switch policy {
        case .pass: behavior = .pass
        case .follow: behavior = .follow
        case .refuse: behavior = .refuse
        }
    }

    public func task(
        _ task: UpstreamTask, willBeRedirectedTo request: Result<UpstreamRequest, SluiceError>,
        for response: ResponseHead
    ) -> RedirectDecision {
        switch behavior {
        case .pass:
            return .pass
        case .refuse:
            return .refuse(
                .redirectFailed(reason: .refused(status: response.status, location: response.headers[.location] ?? ""))
            )
        case .follow:
            switch request {
            case .success(let next): return .follow(next)
            case .failure(.redirectFailed(reason: .bodyNotReplayable)): return .pass
            case .failure(let error): return .refuse(error)
            }
        case .rewrite(let choose):
            guard case .success(let next) = request, let chosen = choose(next, response) else { return .pass }
            return .follow(chosen)
        }
    }
}
