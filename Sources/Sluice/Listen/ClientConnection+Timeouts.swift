import EventIO

/// The client's timeouts: the header timeout while a head arrives in pieces, the body timeout
/// while a request body is read, and the idle timeout between requests, kept as it is through a
/// bodiless exchange (re-arming a timer twice a request cost more than the rest of the socket's
/// bookkeeping).
extension ClientConnection {
    func enterIdle() {
        state = .idle
        let timeouts = env.timeouts
        // Kept only when it is the idle timeout: through a connection's first exchange the read
        // timeout is still `client_header`'s (a new connection's), which must not become its idle one.
        if let since = idleTimeoutKeptSince {
            idleTimeoutKeptSince = nil
            let now = EventLoop.monotonicNanoseconds()
            if connection.readTimeoutMilliseconds == timeouts.clientIdle,
                Self.idleTimeoutFits(since: since, now: now, idleMilliseconds: timeouts.clientIdle)
            {
                return
            }
        }
        connection.setTimeouts(readMilliseconds: timeouts.clientIdle, writeMilliseconds: timeouts.clientBody)
    }

    /// Whether the idle timeout, counting since `since` through a bodiless exchange, may go on as
    /// the next idle period's: it started less than a 64th of the period ago (under a second of
    /// the default minute). Otherwise it starts again, from the end of the response.
    static func idleTimeoutFits(since: UInt64, now: UInt64, idleMilliseconds: Int) -> Bool {
        idleMilliseconds > 0 && now &- since < UInt64(idleMilliseconds) * 1_000_000 / 64
    }

    /// An exchange begins: the body timeout for a request with a body; otherwise the idle
    /// timeout (restarted by the last read, which may have brought several pipelined heads)
    /// stays as it is, and passing during the exchange it only starts again.
    func setExchangeTimeouts() {
        if input == .readingBody {
            idleTimeoutKeptSince = nil
            let timeouts = env.timeouts
            connection.setTimeouts(readMilliseconds: timeouts.clientBody, writeMilliseconds: timeouts.clientBody)
        } else {
            idleTimeoutKeptSince = lastReadAt
        }
    }

    /// A read restarts the socket's read timeout (libevent reschedules a persistent event's
    /// timeout when it fires): the idle period kept through an exchange counts from here.
    func noteRead() {
        lastReadAt = EventLoop.monotonicNanoseconds()
        if idleTimeoutKeptSince != nil { idleTimeoutKeptSince = lastReadAt }
    }

    /// The idle timeout kept through a bodiless exchange passed: the client owes nothing. It
    /// counts again from now, and the client's close is still watched for.
    func keptIdleTimeoutPassed() {
        idleTimeoutKeptSince = EventLoop.monotonicNanoseconds()
        connection.resumeReading()
    }

    /// Before a flushing close: a kept idle timeout would cut the flush short (any event of a
    /// flushing close closes it); the linger bounds it instead, as after a body.
    func dropKeptIdleTimeout() {
        guard idleTimeoutKeptSince != nil else { return }
        idleTimeoutKeptSince = nil
        connection.setTimeouts(readMilliseconds: 0, writeMilliseconds: connection.writeTimeoutMilliseconds)
    }

    /// A head's first bytes that are not the whole head start the header timeout.
    func armHeaderTimer() {
        if headerTimer == nil {
            headerTimer = Timer(loop: env.exchanges.loop) { [unowned self] in
                if case .readingHead = self.state { self.reject(.badRequest(reason: .timedOut)) }
            }
        }
        headerTimer?.schedule(milliseconds: env.timeouts.clientHeader)
    }
}
