import EventIO
import TLS

/// After a `101` the ``Relay`` moves the bytes (WebSocket frames read on the way); the events of
/// both connections go to it.
extension Upgrade {
    /// Message breakpoints that fit this upgrade's request: a gate per direction they apply to.
    func gateMessages(_ relay: Relay) {
        guard env.breakpoints.pausesMessages else { return }
        let points = env.breakpoints.candidates(
            for: .message, method: request.method, host: url.host, path: url.pathAndQuery, fields: request.headers)
        guard !points.isEmpty else { return }
        let shown = PausedMessage(
            method: request.method, url: url.description,
            headers: request.headers.map { ($0.name, ExchangeCapture.shownValue($0)) })
        for direction in [WebSocketFrames.Direction.send, .receive]
        where points.contains(where: { $0.direction == nil || $0.direction == direction.rawValue }) {
            let (book, id) = (env.breakpoints, id)
            let gate = MessageGate(direction: direction, candidates: points, limit: env.transformLimit) {
                point, opcode, payload, gate in
                let item = book.pause(
                    exchange: id, stage: .message, breakpoint: point.name, request: shown, response: nil,
                    contractRule: nil, target: gate)
                item?.direction = direction
                item?.message = PausedMessage(body: payload, opcode: opcode)
                return item
            }
            gate.noted = { [unowned self] what in
                // A long-lived connection passes many messages: a message not paused is said
                // once for each reason, and the whole stays short (it goes in one log line).
                guard let notes = self.breakpointNotes else { return self.breakpointNotes = what }
                guard notes.utf8.count < 1024, !(what.hasPrefix("message not paused") && notes.contains(what)) else {
                    return
                }
                self.breakpointNotes = notes + "; " + what
            }
            relay.gate(gate, up: direction == .send)
        }
    }

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
        case (.endOfStream, .relaying(let relay)) where relay.holdsMessage:
            // Nobody waits for what a person decides: the paused message goes, and its slot.
            finish(aborted: true)
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
        case .idle, .paused, .dialing, .finished: return
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
