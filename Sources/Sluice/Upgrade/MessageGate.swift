/// One direction of a WebSocket through the ``Relay`` when message breakpoints apply to it:
/// frames pass as they come, except a text or binary message a breakpoint may pause, which is
/// gathered whole (its frames, at most `limits.max_transform_body` of payload; control frames
/// in between pass) and, when it fits, held: that direction's messages wait (the other keeps
/// flowing) until a person lets it go on (edited: sent as one frame), drops it, or injects
/// another message ahead of it (``PauseDecision``). Pings and pongs behind it still pass at once
/// (RFC 6455 §5.5.2: a keepalive must not time out while a person decides); a Close waits, in
/// order. Compressed messages (permessage-deflate) are not paused.
final class MessageGate: PauseTarget {
    /// Registers a pause: the breakpoint that fits, the message; `nil` when it cannot wait.
    typealias Pause = (_ point: Breakpoint, _ opcode: WebSocketFrames.Opcode, _ payload: [UInt8], _ gate: MessageGate)
        ->
        PausedItem?

    private struct Gathered {
        var opcode: WebSocketFrames.Opcode
        /// The frames as they came (sent on unchanged).
        var raw: [UInt8] = []
        /// The payload, unmasked.
        var payload: [UInt8] = []
    }

    private enum Phase {
        /// At a frame boundary.
        case between
        /// Passing the rest of a frame's payload.
        case passing(UInt64)
        /// A message that may pause, gathered frame by frame.
        case gathering(Gathered)
        /// Waiting for a person.
        case holding(Gathered)
    }

    let direction: WebSocketFrames.Direction
    let candidates: [Breakpoint]
    let limit: Int
    /// Writes bytes on (to the other side, seen by the relay's observer).
    var write: (UnsafeRawBufferPointer) -> Void = { _ in }
    /// The relay moves this direction again after a decision.
    var resumed: () -> Void = {}
    /// Closes the whole connection (an abort that closes).
    var close: () -> Void = {}
    /// What the gate did, for the exchange's record.
    var noted: (String) -> Void = { _ in }
    private let pause: Pause
    private var phase = Phase.between
    /// Bytes taken from the source and not yet passed on.
    private var pending: [UInt8] = []
    private var start = 0
    /// While holding: bytes after `start` already looked at for pings (frame boundaries).
    private var scanned = 0

    init(
        direction: WebSocketFrames.Direction, candidates: [Breakpoint], limit: Int, pause: @escaping Pause
    ) {
        self.direction = direction
        self.candidates = candidates
        self.limit = limit
        self.pause = pause
    }

    /// Whether a message is held (the relay stops reading this direction).
    var isHolding: Bool { if case .holding = phase { true } else { false } }
    /// Whether nothing is held or waiting here (the direction's end may be passed on).
    var isEmpty: Bool {
        guard case .between = phase else { return false }
        return start == pending.count
    }

    /// The source ended: a message being gathered, or a frame cut short, can no longer
    /// complete, and what came of it goes on as it came (the receiver sees the cut). A complete
    /// message held for a person stays held (the end follows its decision). Whether nothing is
    /// left here.
    func passIncomplete() -> Bool {
        switch phase {
        case .holding: return false
        case .gathering(let gathered):
            gathered.raw.withUnsafeBytes { write($0) }
        case .between, .passing: break
        }
        if start < pending.count { emit(start, pending.count - start) }
        pending.removeAll(keepingCapacity: true)
        start = 0
        phase = .between
        return true
    }

    /// Takes bytes from the source (as many as there is room for) and passes on what it can;
    /// returns how many it took.
    func feed(_ bytes: UnsafeRawBufferPointer) -> Int {
        let room = max(0, limit + Relay.highWater - (pending.count - start))
        let taken = min(room, bytes.count)
        guard taken > 0 else { return 0 }
        if start > 0, start == pending.count {
            pending.removeAll(keepingCapacity: true)
            start = 0
        }
        pending.append(
            contentsOf: UnsafeRawBufferPointer(rebasing: bytes[bytes.startIndex..<(bytes.startIndex + taken)]))
        process()
        return taken
    }

    // MARK: - Frames

    private func process() {
        while start < pending.count {
            switch phase {
            case .holding: return passControlFrames()
            case .passing(let rest):
                let count = Int(min(rest, UInt64(pending.count - start)))
                emit(start, count)
                start += count
                phase = rest == UInt64(count) ? .between : .passing(rest - UInt64(count))
            case .between, .gathering:
                guard let head = MessageGate.head(pending, from: start) else { return }
                if !step(head) {
                    // Held now: pings that came in the same read behind it go on at once.
                    if case .holding = phase { passControlFrames() }
                    return
                }
            }
        }
        if start == pending.count {
            pending.removeAll(keepingCapacity: true)
            start = 0
        }
    }

    /// One frame at `start`; `false` when it must wait for more bytes.
    private func step(_ head: FrameHead) -> Bool {
        let whole = head.size + Int(min(head.length, UInt64(Int.max / 2)))
        let available = pending.count - start
        if head.opcode.map({ $0.isControl }) == true {
            // Control frames (125 bytes at most) pass whole, even inside a gathered message.
            guard available >= whole else { return false }
            emit(start, whole)
            start += whole
            return true
        }
        switch phase {
        case .between:
            guard let opcode = head.opcode, opcode == .text || opcode == .binary, !head.rsv1,
                head.length <= UInt64(limit), fits(opcode)
            else {
                // Not a message that may pause: its frame passes as it comes (one a breakpoint
                // would look at, but compressed or too large: the log says so).
                if let opcode = head.opcode, opcode == .text || opcode == .binary, fits(opcode) {
                    noted(
                        head.rsv1
                            ? "message not paused: it is compressed"
                            : "message not paused: the message is larger than max_transform_body")
                }
                emit(start, head.size)
                start += head.size
                phase = head.length > 0 ? .passing(head.length) : .between
                return true
            }
            guard available >= whole else { return false }
            var gathered = Gathered(opcode: opcode)
            take(head, whole, into: &gathered)
            return head.fin
                ? decide(gathered)
                : {
                    phase = .gathering(gathered); return true
                }()
        case .gathering(var gathered):
            guard head.opcode == .continuation else {
                // A new message before the end of the last: not ours to judge; both pass.
                give(gathered, "a frame out of order")
                return true
            }
            if gathered.payload.count + Int(min(head.length, UInt64(limit) + 1)) > limit {
                give(gathered, "the message is larger than max_transform_body")
                return true
            }
            guard available >= whole else { return false }
            phase = .between  // the enum lets go of the bytes: appended in place
            take(head, whole, into: &gathered)
            return head.fin
                ? decide(gathered)
                : {
                    phase = .gathering(gathered); return true
                }()
        case .passing, .holding:
            return false
        }
    }

    /// While a message is held: the pings and pongs behind it go on at once, taken out of the
    /// queue; data frames wait in order, and so does all from a Close on (nothing may follow
    /// it). Each byte is looked at once (``scanned``): a chatty peer costs no rescans.
    private func passControlFrames() {
        var at = start + scanned
        while let head = MessageGate.head(pending, from: at) {
            let whole = head.size + Int(min(head.length, UInt64(Int.max / 2)))
            guard pending.count - at >= whole, head.opcode != .close else { break }
            if let opcode = head.opcode, opcode.isControl {
                emit(at, whole)
                pending.removeSubrange(at..<(at + whole))
            } else {
                at += whole
            }
        }
        scanned = at - start
    }

    private func fits(_ opcode: WebSocketFrames.Opcode) -> Bool {
        candidates.contains { $0.fitsMessage(direction: direction, opcode: opcode) }
    }

    private func take(_ head: FrameHead, _ whole: Int, into gathered: inout Gathered) {
        gathered.raw.append(contentsOf: pending[start..<(start + whole)])
        var index = 0
        for byte in pending[(start + head.size)..<(start + whole)] {
            gathered.payload.append(head.mask.map { byte ^ $0[index & 3] } ?? byte)
            index += 1
        }
        start += whole
    }

    /// Gathering stops: what was gathered passes unchanged, the rest of the message streams.
    private func give(_ gathered: Gathered, _ why: String) {
        noted("message not paused: \(why)")
        gathered.raw.withUnsafeBytes { write($0) }
        phase = .between
    }

    /// A whole message: held when a breakpoint fits its payload, else passed on.
    private func decide(_ gathered: Gathered) -> Bool {
        if let point = candidates.first(where: {
            $0.fitsMessage(direction: direction, opcode: gathered.opcode)
                && (!$0.readsBody || $0.matchesBody(gathered.payload))
        }), pause(point, gathered.opcode, gathered.payload, self) != nil {
            noted("\(direction.rawValue) message paused at \(point.name)")
            phase = .holding(gathered)
            return false
        }
        gathered.raw.withUnsafeBytes { write($0) }
        phase = .between
        return true
    }

    func resolve(_ decision: PauseDecision, of item: PausedItem) {
        guard case .holding(let gathered) = phase else { return }
        phase = .between
        scanned = 0
        switch decision {
        case .resume(nil), .timedOut:
            noted(decision.isTimeout ? "timed out, sent unchanged" : "sent")
            gathered.raw.withUnsafeBytes { write($0) }
        case .resume(let edit?):
            noted("edited, sent")
            frame(edit.body ?? gathered.payload, opcode: edit.opcode ?? gathered.opcode)
        case .answer(let injected):
            noted("another message injected ahead of it")
            frame(injected.body ?? [], opcode: injected.opcode ?? .text)
            gathered.raw.withUnsafeBytes { write($0) }
        case .abort(let closing):
            noted(closing ? "dropped, connection closed" : "dropped")
            if closing { return close() }
        }
        process()
        resumed()
    }

    /// A message as one frame: FIN, its opcode, masked (with a fresh key) from the client.
    private func frame(_ payload: [UInt8], opcode: WebSocketFrames.Opcode) {
        var bytes: [UInt8] = [0x80 | opcode.rawValue]
        let masked = direction == .send
        let flag: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            bytes.append(flag | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes += [flag | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(flag | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8((UInt64(payload.count) >> UInt64(shift)) & 0xFF))
            }
        }
        if masked {
            let key = (0..<4).map { _ in UInt8.random(in: 0...255) }
            bytes += key
            for (index, byte) in payload.enumerated() { bytes.append(byte ^ key[index & 3]) }
        } else {
            bytes += payload
        }
        bytes.withUnsafeBytes { write($0) }
    }

    private func emit(_ from: Int, _ count: Int) {
        guard count > 0 else { return }
        pending.withUnsafeBytes { write(UnsafeRawBufferPointer(rebasing: $0[from..<(from + count)])) }
    }

    // MARK: - Frame heads

    struct FrameHead {
        var fin: Bool
        var rsv1: Bool
        var opcode: WebSocketFrames.Opcode?
        var mask: [UInt8]?
        /// Bytes of the head.
        var size: Int
        var length: UInt64
    }

    /// The frame head at `from`, when it is all there.
    static func head(_ bytes: [UInt8], from: Int) -> FrameHead? {
        let available = bytes.count - from
        guard available >= 2 else { return nil }
        let first = bytes[from]
        let second = bytes[from + 1]
        let code = second & 0x7F
        let masked = second & 0x80 != 0
        let size = 2 + (code == 126 ? 2 : code == 127 ? 8 : 0) + (masked ? 4 : 0)
        guard available >= size else { return nil }
        var length = UInt64(code)
        var offset = from + 2
        if code == 126 {
            length = UInt64(bytes[offset]) << 8 | UInt64(bytes[offset + 1])
            offset += 2
        } else if code == 127 {
            length = 0
            for index in 0..<8 { length = length << 8 | UInt64(bytes[offset + index]) }
            offset += 8
        }
        let mask = masked ? Array(bytes[offset..<(offset + 4)]) : nil
        return FrameHead(
            fin: first & 0x80 != 0, rsv1: first & 0x40 != 0, opcode: WebSocketFrames.Opcode(rawValue: first & 0x0F),
            mask: mask, size: size, length: length)
    }
}
