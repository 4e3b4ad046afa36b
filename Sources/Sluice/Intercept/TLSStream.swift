import EventIO
import TLS

/// The decrypted side of a TLS connection (an intercepted client's, or Sluice's own to an
/// `https://` origin or parent): a ``ClientStream`` over a ``TLSSession`` whose records are read
/// from and written to the stream under it (``raw``: the socket, or another TLS stream) as the
/// session needs them, with no buffer in between. Plain text is decrypted as the reader asks for
/// it (at most ``plainLimit`` ahead), so a client that sends faster than the exchange reads is
/// held back by the socket's own buffer, as on the plain port.
final class TLSStream: ClientStream, TLSTransport {
    /// Decrypted bytes held ahead of the reader, at most.
    static let plainLimit = 256 * 1024

    /// Where the stream stands.
    enum Phase: Equatable {
        case handshaking
        case open
        /// close_notify sent (``closeWriting()``): the peer's bytes are still read.
        case readOnly
        /// The peer sent close_notify: nothing more comes, but what it asked for still goes
        /// (TLS 1.3 §6.1: each side closes its own writing; a request may come with its close).
        case writeOnly
        /// Both sides closed, or TLS failed (a record that did not authenticate, an alert).
        case closed
    }

    /// What ``advance()`` found.
    enum Progress: Equatable {
        /// The handshake needs more from the client.
        case handshaking
        /// The handshake completed now.
        case established
        case failed(TLSSession.Failure)
        /// Open: plain text may be waiting.
        case open
    }

    let raw: any ClientStream
    let session: TLSSession
    private(set) var phase = Phase.handshaking
    private var plain: [UInt8] = []
    private var start = 0
    private var scratch = [UInt8](repeating: 0, count: 16 * 1024)

    init(raw: any ClientStream, session: TLSSession) {
        self.raw = raw
        self.session = session
        session.transport = self
    }

    // MARK: - The session's transport

    func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard raw.inputCount > 0 else { return 0 }
        let count = raw.withFirstInputSegment { segment -> Int in
            let count = min(segment.count, buffer.count)
            buffer.baseAddress!.copyMemory(from: segment.baseAddress!, byteCount: count)
            return count
        }
        raw.drainInput(count)
        return count
    }

    var receivable: Int { raw.inputCount }

    /// Each record as the session makes it, at once (holding records back for fuller packets,
    /// `MSG_MORE`, was measured: it made the small answers at 64 connections wait for the end of
    /// the loop turn).
    func send(_ bytes: UnsafeRawBufferPointer) { raw.write(bytes, more: false) }

    /// Moves what the client sent through TLS: the handshake while it runs, then plain text.
    func advance() -> Progress {
        switch phase {
        case .handshaking:
            switch session.handshake() {
            case .needMore: return .handshaking
            case .failed(let failure):
                phase = .closed
                return .failed(failure)
            case .established:
                phase = .open
                refill()
                return .established
            }
        case .open, .readOnly:
            refill()
            return .open
        case .writeOnly, .closed:
            return .open
        }
    }

    /// Whether the peer ended its side (close_notify or a failed record).
    var inputEnded: Bool { phase == .writeOnly || phase == .closed }

    /// Whether TLS failed (nothing more goes either way), as opposed to the peer's close_notify.
    var failed: Bool { phase == .closed && !sawCloseNotify }
    private var sawCloseNotify = false

    /// Sends close_notify (before the socket closes), unless it was sent already or the
    /// handshake never finished.
    func close() {
        session.close()
        phase = .closed
    }

    /// Sends close_notify and writes nothing more, but goes on reading (a half-closed tunnel).
    func closeWriting() {
        guard phase == .open || phase == .writeOnly else { return }
        session.close()
        phase = phase == .writeOnly ? .closed : .readOnly
    }

    // MARK: - Reading

    /// Decrypts until ``plainLimit`` bytes wait or the session needs more from the socket.
    private func refill() {
        heldBack = false
        // Nothing new from the client and nothing held by the session: no read to try (this is
        // asked whenever the connection checks for a next request).
        guard phase == .open || phase == .readOnly, raw.inputCount > 0 || session.hasBufferedInput else { return }
        defer { heldBack = plain.count - start >= TLSStream.plainLimit }
        while plain.count - start < TLSStream.plainLimit {
            // Nothing received and nothing held by the session: stop. A read that can only say
            // "need more" goes through OpenSSL's error queue, the dearest part of a small read.
            if raw.inputCount == 0, !session.hasBufferedInput { return }
            let read = scratch.withUnsafeMutableBytes { session.read(into: $0) }
            switch read {
            case .bytes(let count):
                if start > 0, start == plain.count {
                    plain.removeAll(keepingCapacity: true)
                    start = 0
                } else if start >= 64 * 1024 {
                    // Read past, never emptied (a client that keeps pipelining): not kept.
                    plain.removeSubrange(0..<start)
                    start = 0
                }
                plain.append(contentsOf: scratch[0..<count])
            case .needMore:
                return  // the rest of a record is still on its way
            case .closed:
                sawCloseNotify = true
                phase = phase == .readOnly ? .closed : .writeOnly
                return
            case .failed(let reason):
                failure = reason
                phase = .closed
                return
            }
        }
    }

    /// Why the peer's records could not be read, when they could not (OpenSSL's reason: a TLS
    /// alert the peer sent, `tlsv13 alert certificate required`).
    private(set) var failure: String?

    /// Decrypts what came since: when nothing waits, and also when some plain text waits already
    /// but the socket brought more, or the last decryption stopped at ``plainLimit`` (a request
    /// head in two reads, a head over one 16 KiB record, pipelined requests: the reader may need
    /// more than what waits). Otherwise nothing is asked of OpenSSL.
    private func refillIfRoom() {
        if plain.count == start || raw.inputCount > 0 || heldBack { refill() }
    }
    /// The last ``refill()`` stopped at ``plainLimit`` with records still to decrypt, maybe.
    private var heldBack = false

    var inputCount: Int {
        refillIfRoom()
        return plain.count - start
    }

    func withFirstInputSegment<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        refillIfRoom()
        return plain.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    }

    func withInput<R>(upTo count: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        refillIfRoom()
        return plain.withUnsafeBytes {
            body(UnsafeRawBufferPointer(rebasing: $0[start..<min(plain.count, start + count)]))
        }
    }

    func drainInput(_ count: Int) {
        start = min(plain.count, start + count)
        if start == plain.count {
            plain.removeAll(keepingCapacity: true)
            start = 0
        }
    }

    // MARK: - Writing

    func write(_ bytes: UnsafeRawBufferPointer, more: Bool) {
        guard phase == .open || phase == .writeOnly else { return }
        session.write(bytes)
    }

    func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, more: Bool) {
        guard phase == .open || phase == .writeOnly else { return }
        seal(first, second)
    }

    func write(
        _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, _ third: UnsafeRawBufferPointer, more: Bool
    ) {
        guard phase == .open || phase == .writeOnly else { return }
        seal(first, second, third)
    }

    func write(
        _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, _ third: UnsafeRawBufferPointer,
        _ fourth: UnsafeRawBufferPointer, more: Bool
    ) {
        guard phase == .open || phase == .writeOnly else { return }
        seal(first, second, third, fourth)
    }

    /// Encrypts pieces written together: small ones (a head and a short body) gathered into one
    /// TLS record instead of a record each (each costs a header, a tag and a cipher pass).
    private func seal(_ pieces: UnsafeRawBufferPointer...) {
        let total = pieces.reduce(0) { $0 + $1.count }
        guard total <= TLSStream.recordSize else {
            for piece in pieces { session.write(piece) }
            return
        }
        gather.removeAll(keepingCapacity: true)
        for piece in pieces { gather.append(contentsOf: piece) }
        _ = gather.withUnsafeBytes { session.write($0) }
    }

    /// The most plain text one TLS record holds.
    static let recordSize = 16 * 1024
    private var gather: [UInt8] = []

    var outputCount: Int { raw.outputCount }
    var writeBroken: Bool { raw.writeBroken }
}
