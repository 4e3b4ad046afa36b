import EventIO
import TLS

/// The relay after a `101`: bytes both ways with backpressure and half-close, WebSocket frames
/// read on the way; and the events of both connections.
extension Upgrade {

    /// Client to origin, as much as the origin's buffer takes.
    func relayUp(_ relay: Relay) {
        let far = relay.far.stream
        if far.outputCount < Tunnel.highWater { client.connection.readAvailable(upTo: Tunnel.highWater) }
        pump(from: client.stream, to: far, frames: &relay.sent)
        if far.outputCount >= Tunnel.highWater {
            client.connection.pauseReading()
        } else if relay.halfClose.up == .open, clientInputEnded {
            upEnded(relay)
        }
    }

    /// Origin to client, as much as the client's buffer takes.
    func relayDown(_ relay: Relay) {
        if client.stream.outputCount < Tunnel.highWater { relay.far.upstream.readAvailable(upTo: Tunnel.highWater) }
        bytesDown += pump(from: relay.far.stream, to: client.stream, frames: &relay.received)
        if client.stream.outputCount >= Tunnel.highWater {
            relay.far.upstream.pauseReading()
        } else if relay.halfClose.down == .ending || (relay.far.originTLS ?? relay.far.parentTLS)?.inputEnded == true {
            downEnded(relay)
        }
    }

    /// Moves bytes while the sink takes them, reading WebSocket frames on the way.
    @discardableResult
    private func pump(from source: any ClientStream, to sink: any ClientStream, frames: inout WebSocketFrames?) -> Int64
    {
        var moved: Int64 = 0
        while sink.outputCount < Tunnel.highWater, source.inputCount > 0 {
            let count = source.withFirstInputSegment { segment -> Int in
                if frames != nil { frames!.observe(segment) { message in self.observed(message) } }
                sink.write(segment, more: false)
                return segment.count
            }
            source.drainInput(count)
            moved += Int64(count)
        }
        if moved > 0 { lastActivity = EventLoop.monotonicNanoseconds() }
        return moved
    }

    private func observed(_ message: WebSocketFrames.Message) {
        env.stats.webSocketMessages += 1
        if let watcher = env.watcher, watcher.isWatching { watcher.webSocketMessage(id, message) }
    }

    /// The client's side ended (FIN, or TLS close_notify inside an intercepted tunnel).
    private var clientInputEnded: Bool {
        client.inputClosed || (client.stream as? TLSStream)?.inputEnded == true
    }

    /// Nothing more comes from the client: the origin's side is shut for writing.
    private func upEnded(_ relay: Relay) {
        guard relay.halfClose.up != .ended else { return }
        relay.halfClose.up = .ended
        relay.far.originTLS?.closeWriting()
        relay.far.parentTLS?.closeWriting()
        relay.far.upstream.shutdownWrite()
        if relay.halfClose.down == .ended { finish() }
    }

    /// Nothing more comes from the origin: the client's side is shut for writing.
    private func downEnded(_ relay: Relay) {
        guard relay.halfClose.down != .ended else { return }
        relay.halfClose.down = .ended
        (client.stream as? TLSStream)?.closeWriting()
        client.connection.shutdownWrite()
        if relay.halfClose.up == .ended { finish() }
    }

    // MARK: - Events from the client connection

    func clientReadable() {
        if case .relaying(let relay) = phase { relayUp(relay) }
    }

    func clientDrained() {
        switch phase {
        case .relaying(let relay):
            guard relay.halfClose.down != .ended else { return }
            relay.far.upstream.resumeReading()
            relayDown(relay)  // plain text already decrypted gets no read event of its own
        case .passingBack(let far, _):
            far.upstream.resumeReading()
            passBody()
        default:
            return
        }
    }

    func clientEvent(_ event: Connection.Event) {
        switch (event, phase) {
        case (.endOfStream, .relaying(let relay)):
            relayUp(relay)
            upEnded(relay)
        case (.endOfStream, .dialing), (.endOfStream, .securing), (.endOfStream, .awaitingHead):
            // A client may end its side after the handshake request: the answer still goes back.
            return
        case (.endOfStream, .passingBack):
            return
        case (.connected, _):
            return
        case (.endOfStream, _), (.error, _), (.timeout, _):
            finish(aborted: true)
        }
    }
}

extension Upgrade: ConnectionDelegate {
    func connectionDidRead(_ connection: Connection) {
        switch phase {
        case .securing: secure()
        case .awaitingHead(let far, _):
            _ = far.originTLS?.advance()
            readHead()
        case .relaying(let relay):
            _ = relay.far.originTLS?.advance()
            relayDown(relay)
        case .passingBack:
            passBody()
        case .idle, .dialing, .finished: return
        }
    }

    func connectionDidDrain(_ connection: Connection) {
        guard case .relaying(let relay) = phase, relay.halfClose.up != .ended else { return }
        client.connection.resumeReading()
        relayUp(relay)
    }

    func connection(_ connection: Connection, didReceive event: Connection.Event) {
        switch (event, phase) {
        case (.connected, _):
            return
        case (.endOfStream, .relaying(let relay)):
            if relay.halfClose.down == .open { relay.halfClose.down = .ending }
            relayDown(relay)
        case (.endOfStream, .passingBack):
            passBody()
            // Still passing: the end is the body's end only when the close delimits it.
            guard case .passingBack(_, let left) = phase else { return }
            if case .untilClose = left { finish() } else { finish(aborted: true) }
        case (.endOfStream, .securing), (.endOfStream, .awaitingHead):
            failBeforeSwitch(
                .upstreamFailed(
                    reason: .badResponse(detail: "The origin closed the connection before answering the upgrade.")))
        case (.error, .securing), (.error, .awaitingHead):
            failBeforeSwitch(
                .upstreamFailed(
                    reason: .badResponse(detail: "The connection to the origin failed before it answered the upgrade."))
            )
        case (.endOfStream, _), (.error, _), (.timeout, _):
            finish(aborted: true)
        }
    }
}
