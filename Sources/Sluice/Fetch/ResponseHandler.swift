/// Decides at the response headers whether the response may go on (the did-receive-response hook).
/// Validation (status, content type) plugs in here; a cancelled transfer's body is never read.
public protocol ResponseHandler: Sendable {
    /// - Parameters:
    ///   - task: the upstream task.
    ///   - response: the final (non-1xx) response head.
    func task(_ task: UpstreamTask, didReceive response: ResponseHead) -> ResponseDisposition
}

/// The did-receive-response hook's answer.
public enum ResponseDisposition: Sendable, Equatable {
    /// Deliver the response.
    case allow
    /// Stop the transfer now and fail the exchange with this error.
    case cancel(SluiceError)
}

/// The default ``ResponseHandler``: allow everything, or decide with a closure.
public struct ResponseGate: ResponseHandler {
    /// The choices.
    public enum Behavior: Sendable {
        /// Every response passes.
        case allow
        /// A closure decides.
        case decide(@Sendable (ResponseHead) -> ResponseDisposition)
    }

    /// Allows every response.
    public static let allow = ResponseGate(behavior: .allow)

    /// This gate's behavior.
    public let behavior: Behavior

    public init(behavior: Behavior) { self.behavior = behavior }

    public func task(_ task: UpstreamTask, didReceive response: ResponseHead) -> ResponseDisposition {
        switch behavior {
        case .allow: .allow
        case .decide(let decide): decide(response)
        }
    }
}
