import EventIO

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
    /// The socket the rest of the body (`count` bytes, nothing of it delivered yet) may be moved
    /// into by the kernel, unseen (``SocketSplice``): only where nothing would see the bytes on
    /// their way and they would be written as they are; `nil` otherwise.
    func task(_ task: UpstreamTask, sinkForSplicing count: Int64) -> Connection?
    /// Bytes of the body that the kernel moved into the socket ``task(_:sinkForSplicing:)`` gave;
    /// `whole`: all that was asked for (else the transfer fails or was cancelled).
    func task(_ task: UpstreamTask, didSplice count: Int64, whole: Bool)
}

extension TaskDelegate {
    /// Trailers are dropped unless a delegate wants them.
    public func task(_ task: UpstreamTask, didReceiveTrailers trailers: HTTPFields) {}
    /// Bodies come as pieces unless a delegate says where they may go unseen.
    public func task(_ task: UpstreamTask, sinkForSplicing count: Int64) -> Connection? { nil }
    public func task(_ task: UpstreamTask, didSplice count: Int64, whole: Bool) {}
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
