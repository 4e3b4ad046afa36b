import Curl
import EventIO

// MARK: - What transports call

extension UpstreamTask {
    /// A piece of the response body (framing removed): taken, or refused until ``resume()``.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> TransferStep {
        if case .redirecting = phase { return .proceed }  // a followed 3xx: its body is discarded
        guard let delegate else { return .abort }
        if delegate.task(self, didReceive: bytes) {
            bodyBytes += Int64(bytes.count)
            return .proceed
        }
        return .pause
    }

    /// Where the rest of the body (`count` bytes) may be moved by the kernel, unseen: the
    /// delegate's client socket when it allows that (see ``TaskDelegate/task(_:sinkForSplicing:)``).
    func spliceSink(for count: Int64) -> Connection? {
        if case .redirecting = phase { return nil }  // a followed 3xx's body is discarded
        guard let delegate else { return nil }
        return delegate.task(self, sinkForSplicing: count)
    }

    /// Body bytes the kernel has moved to the client so far in a splice still running (they are
    /// told when it ends), for progress.
    var splicedSoFar: Int64 {
        guard case .transferring(let transfer) = phase, case .native(let native) = transfer.carrier else { return 0 }
        return native.splicedSoFar
    }

    /// Body bytes the kernel moved to the client (``spliceSink(for:)``); `whole`: all it was asked.
    func receiveSpliced(_ count: Int64, whole: Bool) {
        bodyBytes += count
        delegate?.task(self, didSplice: count, whole: whole)
    }

    /// Request-body bytes for the transport to send; `.failed` has failed the task.
    func fillUpload(_ buffer: UnsafeMutableRawBufferPointer) -> BodyChunk {
        guard let delegate else { return .failed }
        bodyStarted = true
        let chunk = delegate.task(self, fillBody: buffer)
        if case .failed = chunk { _ = abort(.badRequest(reason: .malformed("the request body failed"))) }
        uploadDid(chunk)
        return chunk
    }

    /// Whether the transport may connect to `address` (the target guard); a refusal is kept for
    /// the error.
    func mayConnect(to address: SocketAddress) -> Bool {
        // Through a parent the socket goes to the parent, which the configuration named.
        if currentRequest.parent != nil { return true }
        guard let refusal = session.targetGuard.refusal(address, localClient: currentRequest.fromLocalClient) else {
            return true
        }
        refusedTarget = refusal
        return false
    }
}

// MARK: - libcurl callbacks

extension UpstreamTask: EasyHandleDelegate {
    public func easyHandle(_ handle: EasyHandle, didReceiveHeaderLine line: UnsafeRawBufferPointer) -> EasyHandle.Action
    {
        switch receiveHeadLine(line) {
        case .more, .continued, .expectationRefused, .final: .proceed
        case .abort: .abort
        }
    }

    public func easyHandle(_ handle: EasyHandle, didReceiveBody bytes: UnsafeRawBufferPointer) -> EasyHandle.Action {
        let step = receiveBody(bytes)
        // Bytes beyond a plain body's end (a followed redirect's too) must not become the next
        // request's answer. Only pieces taken count: libcurl hands a paused one over again.
        if curlBodyLeft > 0, case .proceed = step {
            curlBodyLeft -= Int64(bytes.count)
            if curlBodyLeft == 0 { handle.retireConnectionIfInputWaits() }
        }
        return EasyHandle.Action(step)
    }

    public func easyHandle(_ handle: EasyHandle, fillUploadBuffer buffer: UnsafeMutableRawBufferPointer)
        -> EasyHandle.UploadResult
    {
        switch fillUpload(buffer) {
        case .bytes(let count): .bytes(count)
        case .end: .end
        case .wait: .pause
        case .failed: .abort
        }
    }

    public func easyHandle(_ handle: EasyHandle, mayConnectTo address: SocketAddress) -> Bool {
        mayConnect(to: address)
    }
}

extension EasyHandle.Action {
    init(_ step: TransferStep) {
        switch step {
        case .proceed: self = .proceed
        case .pause: self = .pause
        case .abort: self = .abort
        }
    }
}
