import EventIO
import TLS

/// Half-close and idleness of a relay as a value: which directions have ended, and when bytes
/// last moved. Pure; ``Relay`` carries out what it says.
struct RelayState: Equatable {
    /// One direction.
    enum Flow: Equatable {
        /// Bytes go on.
        case open
        /// The sender ended while bytes for the receiver were still waiting: the end is passed
        /// on once they are written.
        case ending
        /// The end was passed on.
        case ended
    }

    /// Client to far side, and far side to client.
    private(set) var up = Flow.open
    private(set) var down = Flow.open
    /// When bytes last moved (monotonic nanoseconds).
    private(set) var lastActivity: UInt64

    init(now: UInt64) { lastActivity = now }

    /// Both ends were passed on: nothing more can move.
    var isOver: Bool { up == .ended && down == .ended }

    mutating func moved(now: UInt64) { lastActivity = max(lastActivity, now) }

    /// Whether nothing moved for `limit` milliseconds.
    func isIdle(now: UInt64, limit: Int) -> Bool {
        now >= lastActivity && (now - lastActivity) / 1_000_000 >= UInt64(max(0, limit))
    }

    /// The far side ended; its end is passed on once what it sent before is written.
    mutating func farEnding() { if down == .open { down = .ending } }

    /// The client ended; likewise.
    mutating func clientEnding() { if up == .open { up = .ending } }

    /// Whether an end waits to be passed on.
    var downEnding: Bool { down == .ending }
    var upEnding: Bool { up == .ending }

    /// Passes an end on; `false` when it was passed on already.
    mutating func endUp() -> Bool {
        guard up != .ended else { return false }
        up = .ended
        return true
    }

    mutating func endDown() -> Bool {
        guard down != .ended else { return false }
        down = .ended
        return true
    }
}

/// The one relay of CONNECT tunnels and upgraded connections (WebSockets): bytes both ways with
/// backpressure (at most ``highWater`` held for a side that does not read, which then stops
/// being read), half-close passed on, the idle limit (`timeouts.tunnel_idle`), and an observer
/// per direction that sees each piece on its way (WebSocket frames). Its owner stays the
/// connections' delegate and passes their events on; the relay says when it is over.
final class Relay {
    /// One side: its socket (read, paused, shut down) and the TLS layers over it, outermost
    /// first (an origin's TLS inside a parent's); the bytes are the outermost layer's plain text.
    struct Side {
        let socket: Connection
        var layers: [TLSStream] = []
        var stream: any ClientStream { layers.first ?? socket }
    }

    /// Bytes held for a side that does not read; also the most one read or write moves.
    static let highWater = 256 * 1024
    /// Bytes relayed to the client before the rest goes socket to socket in the kernel: a tunnel
    /// that carries a download (a pipe's two descriptors are spent on it, not on every tunnel).
    static let spliceAfter: Int64 = 256 * 1024

    let client: Side
    let far: Side
    private(set) var state: RelayState
    /// Bytes moved to the client (the kernel's part included) and to the far side.
    var bytesDown: Int64 { pumpedDown + (downSplice?.moved ?? 0) }
    private(set) var bytesUp: Int64 = 0
    /// Bytes to the client that went through this process.
    private var pumpedDown: Int64 = 0
    /// Far side to client moving in the kernel (``SocketSplice``): a plain tunnel's download, once
    /// nothing waits in either buffer and nothing watches the bytes. It runs until the far side
    /// ends (its FIN is passed on) or either side fails.
    private var downSplice: SocketSplice?
    /// Whether the download went on in the kernel at some point.
    private(set) var spliced = false
    /// What the splice had moved when the idle timer last looked.
    private var splicedSeen: Int64 = 0
    /// The owner holds the client's first bytes (to see whether HTTP is spoken): nothing goes
    /// unseen before they are passed on.
    private var clientHeld = false
    /// See each piece before it is written (client to far side, and back).
    var observeUp: ((UnsafeRawBufferPointer) -> Void)?
    var observeDown: ((UnsafeRawBufferPointer) -> Void)?
    /// Message breakpoints per direction (a WebSocket's): frames go through them, and a held
    /// message stops that direction until it is decided.
    private(set) var gateUp: MessageGate?
    private(set) var gateDown: MessageGate?
    private let loop: EventLoop
    private let idleLimit: Int
    private var idleTimer: Timer?
    private let over: () -> Void
    private var finished = false

    /// - Parameter over: runs once, when both ends were passed on or nothing moved for `idleLimit`
    ///   milliseconds (the owner closes the connections and logs).
    init(client: Side, far: Side, loop: EventLoop, idleLimit: Int, over: @escaping () -> Void) {
        self.client = client
        self.far = far
        self.loop = loop
        self.idleLimit = idleLimit
        self.over = over
        state = RelayState(now: EventLoop.monotonicNanoseconds())
    }

    /// Starts moving: what either side holds already goes first, the client's unless
    /// `holdingClient` (its owner looks at its first bytes and passes them on with
    /// ``clientReadable()``).
    func start(holdingClient: Bool = false) {
        for socket in [client.socket, far.socket] {
            socket.setMaxSingleIO(Relay.highWater)
        }
        far.socket.setWatermarks(readHigh: Relay.highWater, writeLow: ClientConnection.outputLowWater)
        idleTimer = Timer(loop: loop, repeats: true) { [unowned self] in
            let now = EventLoop.monotonicNanoseconds()
            if let splice = self.downSplice, splice.moved != self.splicedSeen {
                self.splicedSeen = splice.moved
                self.state.moved(now: now)
            }
            // A message held at a breakpoint is a person's time, not the tunnel's idleness.
            if self.gateUp?.isHolding == true || self.gateDown?.isHolding == true { self.state.moved(now: now) }
            if self.state.isIdle(now: now, limit: self.idleLimit) { self.end() }
        }
        idleTimer?.schedule(milliseconds: max(100, min(idleLimit, 10_000) / 2))
        client.socket.resumeReading()
        clientHeld = holdingClient
        if !holdingClient { up() }
        down()
    }

    /// Stops the timer and closes the far side (close_notify first): after both ends were passed
    /// on, once what is queued for it was written; else (idle, an error) at once. The client's
    /// side is the owner's.
    func closeFar() {
        idleTimer?.cancel()
        finished = true
        stopSplice()
        for layer in far.layers { layer.close() }
        if state.isOver { far.socket.closeAfterFlush() } else { far.socket.close() }
    }

    /// Puts message breakpoints on a direction: its frames pass through `gate`.
    func gate(_ gate: MessageGate, up: Bool) {
        if up { gateUp = gate } else { gateDown = gate }
        let (sink, observe) =
            up
            ? (far.stream, { [unowned self] in self.observeUp })
            : (client.stream, { [unowned self] in self.observeDown })
        gate.write = { bytes in
            observe()?(bytes)
            sink.write(bytes, more: false)
        }
        gate.resumed = { [weak self] in
            guard let self, !self.finished else { return }
            if up {
                self.client.socket.resumeReading()
                self.up()
            } else {
                self.far.socket.resumeReading()
                self.down()
            }
        }
        gate.close = { [weak self] in self?.end() }
    }

    // MARK: - Events, passed on by the owner

    func clientReadable() {
        clientHeld = false
        up()
    }

    func farReadable() {
        _ = far.layers.first?.advance()
        down()
    }

    /// The client's buffer has room again: the far side is read again.
    func clientDrained() {
        guard state.down != .ended, downSplice == nil else { return }
        far.socket.resumeReading()
        down()  // plain text already decrypted gets no read event of its own
    }

    /// The far side's buffer has room again: the client is read again.
    func farDrained() {
        guard state.up != .ended else { return }
        client.socket.resumeReading()
        up()
    }

    /// Whether a message waits at a breakpoint, in either direction.
    var holdsMessage: Bool { gateUp?.isHolding == true || gateDown?.isHolding == true }

    /// The client ended its side (FIN): what it sent goes on, then the end.
    func clientEnded() {
        state.clientEnding()
        up()
    }

    /// The far side ended its side: passed on once what it sent is written.
    func farEnded() {
        state.farEnding()
        down()
    }

    // MARK: - Moving

    /// Client to far side, as much as the far side's buffer takes.
    private func up() {
        guard !finished else { return }
        let sink = far.stream
        if sink.outputCount < Relay.highWater { client.socket.readAvailable(upTo: Relay.highWater) }
        bytesUp += pump(from: client.stream, to: sink, observe: observeUp, gate: gateUp)
        if sink.outputCount >= Relay.highWater {
            client.socket.pauseReading()
        } else if gateUp?.isHolding == true {
            // A message waits for a person: the client is still read, up to a mark, so that its
            // leaving is noticed (the paused item goes with it).
            if client.stream.inputCount >= Relay.highWater { client.socket.pauseReading() }
        } else if (state.upEnding && client.stream.inputCount == 0) || client.layers.first?.inputEnded == true {
            // What the client sent before its FIN (or close_notify) went on; a message being
            // gathered goes first, and one cut by the end goes on as it came.
            if let gate = gateUp, !gate.isEmpty, !gate.passIncomplete() { return }
            endUp()
        }
    }

    /// Far side to client, as much as the client's buffer takes.
    private func down() {
        guard !finished else { return }
        guard downSplice == nil else { return }
        let sink = client.stream
        if sink.outputCount < Relay.highWater { far.socket.readAvailable(upTo: Relay.highWater) }
        pumpedDown += pump(from: far.stream, to: sink, observe: observeDown, gate: gateDown)
        if sink.outputCount >= Relay.highWater {
            far.socket.pauseReading()
        } else if gateDown?.isHolding == true {
            // As up(): read on, up to a mark (pings pass; the far side's leaving is noticed).
            if far.stream.inputCount >= Relay.highWater { far.socket.pauseReading() }
        } else if state.downEnding || far.layers.first?.inputEnded == true {
            if let gate = gateDown, !gate.isEmpty, !gate.passIncomplete() { return }
            endDown()
        } else if gateDown.map({ !$0.isEmpty }) == true {
            return
        } else if pumpedDown >= Relay.spliceAfter {
            spliceDown()
        }
    }

    /// The rest of the far side's bytes go to the client in the kernel, when nothing else wants
    /// them on the way: plain sockets, no observer or gate, the client's first bytes passed on,
    /// nothing buffered either way.
    private func spliceDown() {
        guard far.layers.isEmpty, client.layers.isEmpty, observeDown == nil, gateDown == nil, !clientHeld,
            state.down == .open, far.socket.inputCount == 0, client.socket.outputCount == 0,
            let splice = SocketSplice(
                loop: loop, from: far.socket, to: client.socket, count: nil, timeoutMilliseconds: 0,
                done: { [weak self] outcome in self?.spliceEnded(outcome) })
        else { return }
        downSplice = splice
        spliced = true
        splicedSeen = 0
        splice.start()
    }

    /// The far side ended (its end is passed on), or a side failed (the relay is over).
    private func spliceEnded(_ outcome: SocketSplice.Outcome) {
        stopSplice()
        switch outcome {
        case .sourceEnded, .moved:
            state.farEnding()
            endDown()
        case .sourceFailed, .sinkFailed:
            end()
        }
    }

    /// Counts what the splice moved and drops it (cancelled if it still runs).
    private func stopSplice() {
        guard let splice = downSplice else { return }
        downSplice = nil
        pumpedDown += splice.moved
        splice.cancel()
    }

    /// Moves bytes while the sink takes them: buffer to buffer between plain sockets with
    /// nothing to observe, else piece by piece.
    private func pump(
        from source: any ClientStream, to sink: any ClientStream, observe: ((UnsafeRawBufferPointer) -> Void)?,
        gate: MessageGate?
    ) -> Int64 {
        var moved: Int64 = 0
        if let gate {
            // Frames through the gate, which writes what passes (and lets the observer see it).
            // (A gate holding a message still takes bytes, up to its room: pings behind it pass.)
            while sink.outputCount < Relay.highWater, source.inputCount > 0 {
                let taken = source.withFirstInputSegment { gate.feed($0) }
                if taken == 0 { break }
                source.drainInput(taken)
                moved += Int64(taken)
            }
        } else if observe == nil, let from = source as? Connection, let to = sink as? Connection {
            moved = Int64(from.moveInput(to: to))
        } else {
            while sink.outputCount < Relay.highWater, source.inputCount > 0 {
                let count = source.withFirstInputSegment { segment -> Int in
                    observe?(segment)
                    sink.write(segment, more: false)
                    return segment.count
                }
                source.drainInput(count)
                moved += Int64(count)
            }
        }
        if moved > 0 { state.moved(now: EventLoop.monotonicNanoseconds()) }
        return moved
    }

    /// Nothing more comes from the client: the far side is shut for writing.
    private func endUp() {
        guard state.endUp() else { return }
        for layer in far.layers { layer.closeWriting() }
        far.socket.shutdownWrite()
        if state.isOver { end() }
    }

    /// Nothing more comes from the far side: the client's side is shut for writing.
    private func endDown() {
        guard state.endDown() else { return }
        for layer in client.layers { layer.closeWriting() }
        client.socket.shutdownWrite()
        if state.isOver { end() }
    }

    private func end() {
        guard !finished else { return }
        finished = true
        idleTimer?.cancel()
        over()
    }
}
