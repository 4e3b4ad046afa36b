import EventIO

/// The upstream task's moments, delivered to the client.
extension Exchange: TaskDelegate {
    func task(_ task: UpstreamTask, didReceive response: ResponseHead) {
        if client.server.isShuttingDown { keepAlive = false }
        let (headers, framing) = Forwarding.clientResponse(
            response, request: request, date: client.server.date.now, keepAlive: keepAlive)
        self.framing = framing
        if framing == .close { keepAlive = false }
        status = response.status
        // Held back until the first body bytes, so head and body leave in one write.
        pendingHead = ResponseWriter.head(status: response.status, reason: response.reason, headers: headers)
    }

    /// Writes the held-back head together with `pieces`.
    private func send(_ pieces: UnsafeRawBufferPointer...) {
        let connection = client.connection
        guard let head = pendingHead else {
            for piece in pieces { connection.write(piece) }
            return
        }
        pendingHead = nil
        headSent = true
        head.withUnsafeBytes { headBytes in
            switch pieces.count {
            case 0: connection.write(headBytes)
            case 1: connection.write(headBytes, pieces[0])
            case 2: connection.write(headBytes, pieces[0], pieces[1])
            default: connection.write(headBytes, pieces[0], pieces[1], pieces[2])
            }
        }
    }

    func task(_ task: UpstreamTask, didReceive bytes: UnsafeRawBufferPointer) -> Bool {
        let connection = client.connection
        if connection.outputCount >= ClientConnection.outputHighWater {
            pausedForClient = true
            return false
        }
        switch framing {
        case .none:
            return true
        case .chunked:
            let size = ResponseWriter.chunkHeader(bytes.count)
            size.withUnsafeBytes { sizeBytes in
                ResponseWriter.crlf.withUnsafeBytes { crlf in send(sizeBytes, bytes, crlf) }
            }
        case .length, .close:
            send(bytes)
        }
        bytesSent += Int64(bytes.count)
        return true
    }

    func task(_ task: UpstreamTask, fillBody buffer: UnsafeMutableRawBufferPointer) -> BodyChunk {
        if request.expectsContinue, !continueSent {
            continueSent = true
            client.connection.write(ResponseWriter.continueResponse)
        }
        switch body.read(from: client.connection, into: buffer) {
        case .bytes(let count):
            return .bytes(count)
        case .end:
            client.requestBodyDidEnd()
            return .end
        case .wait:
            if client.inputClosed {
                error = .badRequest(reason: .malformed("the client closed the connection during the request body"))
                return .failed
            }
            waitingForBody = true
            return .wait
        case .failure(let failure):
            error = failure
            return .failed
        }
    }

    func task(_ task: UpstreamTask, didCompleteWith failure: SluiceError?) {
        guard self.task === task else { return }
        if let failure {
            // A request-body failure outranks what libcurl reports about the aborted upload.
            return fail(error ?? failure)
        }
        if framing == .chunked {
            ResponseWriter.lastChunk.withUnsafeBytes { send($0) }
        } else {
            send()
        }
        responseComplete = true
        finishIfDone()
    }
}
