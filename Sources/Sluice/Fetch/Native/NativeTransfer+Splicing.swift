import EventIO

#if canImport(Glibc)
    import Glibc
#endif

/// Splicing: the rest of a large body of known length moved from the origin's socket to the
/// client's in the kernel.
extension NativeTransfer {
    /// The rest of a body of known length, none of it buffered here, moves in the kernel from the
    /// origin's plain socket to the client's when it is large and the task lets it go unseen
    /// (nothing stores, checks, transforms, captures or shapes it); `false` leaves it to reading.
    func splice(_ remaining: Int64) -> Bool {
        guard remaining >= NativeTransfer.spliceMinimum, let socket = connection?.stream as? Connection,
            let sink = task?.spliceSink(for: remaining),
            let splice = SocketSplice(
                loop: transport.loop, from: socket, to: sink, count: remaining,
                timeoutMilliseconds: transport.settings.idleTimeoutMilliseconds,
                done: { [weak self] outcome in self?.spliceEnded(outcome) })
        else { return false }
        reading = .spliced(splice)
        splice.start()
        return true
    }

    /// Bytes moved by a splice still running.
    var splicedSoFar: Int64 {
        if case .spliced(let splice) = reading { return splice.moved }
        return 0
    }

    /// The splice ended: the body is whole, or the transfer fails as reading it would have.
    func spliceEnded(_ outcome: SocketSplice.Outcome) {
        guard case .spliced(let splice) = reading else { return }
        reading = .body(.exactly(0))
        if splice.moved > 0 { task?.receiveSpliced(splice.moved, whole: outcome == .moved) }
        guard !isDone, connection != nil else { return }
        switch outcome {
        case .moved:
            // Bytes beyond the end stayed in the socket, unseen: the connection is not reused.
            let stray = connection?.socket?.hasWaitingInput ?? true
            connection?.socket?.resumeReading()  // an idle connection's close is seen by reading
            responseEnded(beyondTheEnd: stray)
        case .sourceEnded:
            peerClosed = true
            stop(
                .native(
                    .upstreamFailed(
                        reason: .badResponse(detail: "The origin closed the connection before the end of the body."))))
        case .sourceFailed(let code?):
            let detail = String(cString: strerror(code))
            stop(
                .native(
                    .upstreamFailed(reason: .badResponse(detail: "The connection to the origin failed (\(detail))."))))
        case .sourceFailed(nil):
            stop(
                .native(
                    .upstreamFailed(
                        reason: .timedOut(
                            detail: "The origin sent nothing for \(transport.settings.idleTimeoutMilliseconds) ms."))))
        case .sinkFailed:
            // The client is gone or stalled: its connection tells the exchange, which cancels
            // this transfer. The origin's connection closes now, mid-body; should nobody cancel,
            // the transfer fails at the next turn.
            if let connection {
                self.connection = nil
                transport.release(connection, reusable: false)
            }
            transport.loop.callSoon { [weak self] in
                guard let self, !self.isDone else { return }
                self.finish(
                    .native(.upstreamFailed(reason: .cancelled(detail: "The client stopped taking the response."))))
            }
        }
    }
}
