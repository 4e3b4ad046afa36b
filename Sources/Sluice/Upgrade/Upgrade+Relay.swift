import EventIO
import TLS

/// After a `101` the ``Relay`` moves the bytes (WebSocket frames read on the way); the events of
/// both connections go to it.
extension Upgrade {
    func observed(_ message: WebSocketFrames.Message) {
        env.stats.webSocketMessages += 1
        if let watcher = env.watcher, watcher.isWatching { watcher.webSocketMessage(id, message) }
    }

    // MARK: - Events from the client connection

    func clientReadable() {
        if case .relaying(let relay) = phase { relay.clientReadable() }
    }

    func clientDrained() {
        switch phase {
        case .relaying(let relay):
            relay.clientDrained()
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
            relay.clientEnded()
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
            relay.farReadable()
        case .passingBack:
            passBody()
        case .idle, .dialing, .finished: return
        }
    }

    func connectionDidDrain(_ connection: Connection) {
        if case .relaying(let relay) = phase { relay.farDrained() }
    }

    func connection(_ connection: Connection, didReceive event: Connection.Event) {
        switch (event, phase) {
        case (.connected, _):
            return
        case (.endOfStream, .relaying(let relay)):
            relay.farEnded()
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
