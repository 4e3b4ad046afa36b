import CEvent

#if canImport(Glibc)
    import Glibc
#endif

/// Writes held to the end of a busy loop turn.
///
/// When other events wait in the same turn, a small write is not sent at once: its bytes are
/// kept (``held``) and leave at the end of the turn, together with whatever else the connection
/// writes in it, all connections' one after another. A burst of responses wakes a peer once
/// instead of once per response, and a burst of requests to an origin that shares the proxy's
/// core lets the proxy finish its turn before the origin runs (with every request sent as it was
/// made, the origin took the core after each one: a context switch per request). Held bytes count
/// as written: everything written later goes after them, and whatever writes to the socket
/// another way (a file, a splice, a move from another connection, a shutdown or a close) sends
/// them first. "The end of the turn" is after every callback due when the first write was held
/// (all the sockets the poll found ready); a write held by a callback fired later in the turn
/// leaves after it, at a second end.
extension Connection {
    /// The most one connection holds; a larger write goes at once, held bytes first.
    public static let holdLimit = 16 * 1024

    /// Bytes written in this turn that wait for its end.
    public var heldCount: Int { held.count }

    /// Whether a write of `count` more bytes waits for the end of the turn.
    func holds(adding count: Int) -> Bool {
        if held.isEmpty {
            return count <= Connection.holdLimit && loop.othersReady && loop.mayHold(count)
        }
        return held.count + count <= Connection.holdLimit && loop.mayHold(count)
    }

    /// Keeps `piece` for the end of the turn (copied).
    func hold(_ piece: UnsafeRawBufferPointer) {
        guard let base = piece.baseAddress, piece.count > 0 else { return }
        if held.isEmpty { loop.holdUntilTurnEnd(self) }
        held.append(
            contentsOf: UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: piece.count))
        loop.heldBytes += piece.count
    }

    /// Sends the held bytes now; what the socket does not take goes to the output buffer. `more`:
    /// the caller writes to the socket right after (a body's first bytes), so the held bytes may
    /// wait in the kernel to share their packet (`MSG_MORE`, pushed at the end of the turn at the
    /// latest).
    func sendHeld(more: Bool = false) {
        guard !held.isEmpty else { return }
        guard let bev, !writeBroken else { return releaseHeld() }
        var sent = 0
        if directWrites, evbuffer_get_length(bufferevent_get_output(bev)) == 0 {
            sent = held.withUnsafeBytes {
                send(bufferevent_getfd(bev), $0.baseAddress!, $0.count, Connection.sendFlags(more: more))
            }
            if sent < 0 {
                if peerGone(errno) { return }  // (it let go of the held bytes)
                sent = 0
            }
            noteHeld(more)
        }
        if sent < held.count {
            held.withUnsafeBytes { _ = bufferevent_write(bev, $0.baseAddress! + sent, $0.count - sent) }
        }
        releaseHeld()
    }

    /// Pushes out what writes with `more` left in the kernel (``EventLoop/pushAtTurnEnd(_:)``).
    func pushHeldSegment() {
        pushDue = false
        guard holding, bev != nil else { return }
        holding = false
        setNoDelay()
    }

    /// Forgets the held bytes (sent, queued, or for a peer that is gone).
    func releaseHeld() {
        guard !held.isEmpty else { return }
        loop.heldBytes -= held.count
        held = []
    }
}

extension EventLoop {
    /// The most all connections hold at once: past it, writes go at once.
    static let heldBytesLimit = 256 * 1024

    /// Whether `count` more bytes may be held in this turn.
    func mayHold(_ count: Int) -> Bool { heldBytes + count <= EventLoop.heldBytesLimit }

    /// Sends `connection`'s held bytes at the end of this turn.
    func holdUntilTurnEnd(_ connection: Connection) {
        heldConnections.append(connection)
        turnEndIsDue()
    }

    /// Tells `observer` when the callbacks due in this loop turn have run (every socket the poll
    /// found ready; a callback fired soon after this call comes after it), before held writes
    /// are sent; once per call. The loop holds `observer` until then: an object with unowned
    /// references to others that may go first must not ask, or not use them when told.
    public func atTurnEnd(_ observer: any TurnEndObserver) {
        turnEndObservers.append(observer)
        turnEndIsDue()
    }

    /// Pushes out at the end of this turn what `connection`'s writes with `more` left in the
    /// kernel, unless a later write without it did (``Connection/holding``).
    func pushAtTurnEnd(_ connection: Connection) {
        guard !connection.pushDue else { return }
        connection.pushDue = true
        pushConnections.append(connection)
        turnEndIsDue()
    }

    private func turnEndIsDue() {
        guard !turnEndDue else { return }
        turnEndDue = true
        event_active(turnEndEvent, EV_TIMEOUT, 1)
    }

    /// The end of a turn: observers hear of it, then the writes held in it go, in the order
    /// they were made, then what writes with `more` left in the kernel is pushed out.
    func endTurn() {
        turnEndDue = false
        takeEach(\.turnEndObservers) { $0.loopTurnDidEnd() }
        takeEach(\.heldConnections) { $0.sendHeld() }
        takeEach(\.pushConnections) { $0.pushHeldSegment() }
    }

    /// Runs `body` on each item of the list at `list`, taken out first (a call may add to it
    /// anew: that goes in the list again); the list's room is kept for the next turn.
    private func takeEach<Item>(_ list: ReferenceWritableKeyPath<EventLoop, [Item]>, _ body: (Item) -> Void) {
        guard !self[keyPath: list].isEmpty else { return }
        var items: [Item] = []
        swap(&items, &self[keyPath: list])
        for item in items { body(item) }
        if self[keyPath: list].isEmpty {
            items.removeAll(keepingCapacity: true)
            self[keyPath: list] = items
        }
    }
}

/// Work left for the end of a loop turn (``EventLoop/atTurnEnd(_:)``).
public protocol TurnEndObserver: AnyObject {
    /// The callbacks due when it asked have run.
    func loopTurnDidEnd()
}
