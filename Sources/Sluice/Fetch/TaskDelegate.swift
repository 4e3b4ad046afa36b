/// Receives one upstream task's response, after the session's hooks have had their say.
/// ``Exchange`` is the one implementation: it writes to the client.
public protocol TaskDelegate: AnyObject {
    /// An interim (1xx) response from the origin other than 100 and 101, hop-by-hop fields removed;
    /// the final response follows.
    func task(_ task: UpstreamTask, didReceiveInterim response: ResponseHead)
    /// The response head to deliver.
    func task(_ task: UpstreamTask, didReceive response: ResponseHead)
    /// A piece of body. Return `false` to pause the transfer until ``UpstreamTask/resume()``.
    func task(_ task: UpstreamTask, didReceive bytes: UnsafeRawBufferPointer) -> Bool
    /// Fill `buffer` with request-body bytes.
    func task(_ task: UpstreamTask, fillBody buffer: UnsafeMutableRawBufferPointer) -> BodyChunk
    /// The response's trailer fields (after the body: chunked coding's, HTTP/2's trailing HEADERS).
    func task(_ task: UpstreamTask, didReceiveTrailers trailers: HTTPFields)
    /// The task ended; `error` is `nil` when the response arrived whole.
    func task(_ task: UpstreamTask, didCompleteWith error: SluiceError?)
}

extension TaskDelegate {
    /// Trailers are dropped unless a delegate wants them.
    public func task(_ task: UpstreamTask, didReceiveTrailers trailers: HTTPFields) {}
}

/// A request-body read's outcome.
public enum BodyChunk: Sendable, Equatable {
    /// This many bytes were written.
    case bytes(Int)
    /// The body is complete.
    case end
    /// Nothing available yet; the task is resumed when there is.
    case wait
    /// The client's body failed (framing, limit, disconnect).
    case failed
}
