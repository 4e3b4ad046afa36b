import EventIO
import HTTP2
import Logging

// What bounds a client's hold on an HTTP/2 connection: streams stalled past
// `timeouts.client_body`, and cancelled streams (rapid reset).
extension HTTP2Connection {
    /// The stall check runs every quarter of `timeouts.client_body` (at most every second)
    /// while the connection lives; `0` turns it off, as it does the HTTP/1.1 timeout.
    func watchStalls() {
        let limit = env.timeouts.clientBody
        guard stallTimer == nil, limit > 0 else { return }
        let timer = Timer(loop: loop, repeats: true) { [weak self] in
            self?.checkStalls(now: EventLoop.monotonicNanoseconds())
        }
        timer.schedule(milliseconds: max(100, min(1000, limit / 4)))
        stallTimer = timer
    }

    /// Streams stalled past `timeouts.client_body` end as an HTTP/1.1 exchange does on that
    /// timeout: a request body that stopped coming is a `408` (or a reset once the answer began),
    /// a response the client does not read is cut (RST_STREAM). Their upstream transfers stop.
    func checkStalls(now: UInt64) {
        let limit = UInt64(env.timeouts.clientBody) * 1_000_000
        for stream in Array(streams.values) {
            switch stream.stall(now: now, limit: limit, connectionMovedAt: movedAt) {
            case .request?:
                env.logger.info("HTTP/2 stream \(stream.id) of \(client.peerText): request body stalled")
                stream.exchange?.clientFailed(.badRequest(reason: .timedOut))
            case .response?:
                env.logger.info("HTTP/2 stream \(stream.id) of \(client.peerText): the client does not read")
                stream.exchange?.clientFailed(nil)
            case nil:
                continue
            }
        }
        flush()
    }

    /// Streams the client cancels younger than this count as rapid resets.
    static let rapidResetAge: UInt64 = 50_000_000

    /// More than 200 streams cancelled young by the client within 10 seconds end the connection
    /// (rapid reset, CVE-2023-44487: each cancelled stream costs an exchange), as do more than
    /// 2,000 cancelled at any age (deadlines that expire by the hundred are no attack; an attack
    /// that waits before each cancel still meets a bound).
    func noteReset(young: Bool) {
        let now = EventLoop.monotonicNanoseconds()
        if young { resets.append(now) }
        lateResets.append(now)
        resets.removeAll { now - $0 > 10_000_000_000 }
        lateResets.removeAll { now - $0 > 10_000_000_000 }
        if resets.count > 200 || lateResets.count > 2_000, !closing {
            env.logger.warning("HTTP/2 client \(client.peerText) cancelled streams too fast (rapid reset); GOAWAY sent")
            env.exchanges.stats.http2RapidResets += 1
            lastAccepted = session.goAway(error: .enhanceYourCalm)
            closing = true
        }
    }
}
