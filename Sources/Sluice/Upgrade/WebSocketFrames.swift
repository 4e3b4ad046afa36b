import Codec
import EventIO

/// WebSocket frames (RFC 6455 §5) read as they pass through one direction of a relay, without
/// holding any: each message's opcode, size and first ``previewLimit`` bytes (unmasked, and
/// decoded when `permessage-deflate` compressed it, RFC 7692), fragmented messages joined,
/// control frames between fragments reported on their own. Bytes that break the framing stop
/// the reading (the endpoints decide what to do); the relay goes on.
struct WebSocketFrames {
    /// Which way the bytes go.
    enum Direction: String, Sendable {
        /// Client to origin (masked frames).
        case send
        /// Origin to client.
        case receive
    }

    /// What a frame is (RFC 6455 §5.2); the other values are reserved.
    enum Opcode: UInt8, Sendable {
        case continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA

        /// Close, ping and pong: never fragmented, at most 125 bytes, allowed between fragments.
        var isControl: Bool { rawValue & 0x8 != 0 }
    }

    /// One message, or one control frame.
    struct Message: Equatable, Sendable {
        var direction: Direction
        /// Text, binary, close, ping or pong.
        var opcode: Opcode
        /// Payload bytes on the wire (compressed size for a compressed message).
        var size: Int64
        /// The first bytes of the payload, decoded when compressed.
        var preview: [UInt8]
        /// `size` exceeds what the preview shows (or decoding it produced more).
        var truncated: Bool
        var compressed: Bool
        /// The frames it took.
        var frames: Int
        /// A close frame's status code.
        var closeCode: UInt16?
    }

    /// Payload bytes kept per message.
    static let previewLimit = 1024

    /// How much decoding compressed messages may cost a direction: deflate expands a byte to up
    /// to 1,032, all of it decoded on the loop (the window must follow the sender's for the next
    /// message) though only previews are kept. Past `decodeAllowance` + `decodeRatio` bytes per
    /// compressed byte received + `decodeRefill` a second since the relay began, decoding stops:
    /// for good when the window carries over (context takeover: later messages are not
    /// previewed), else until a later message finds the budget grown again. (The refill keeps
    /// long-lived connections whose repeated messages compress very well, a state pushed every
    /// second, previewed; a bomb gets a few milliseconds of the loop a second.)
    static let decodeRatio: Int64 = 32
    static let decodeAllowance: Int64 = 1 << 20
    static let decodeRefill: Int64 = 4 << 20

    let direction: Direction
    /// `permessage-deflate` was agreed; `resetsWindow`: the sender agreed `no_context_takeover`.
    private let inflater: RawInflater?
    private let resetsWindow: Bool
    /// Compressed messages are decoded (for their preview): until decoding passes its limit
    /// with the window carrying over.
    private var decodes = true
    /// Compressed bytes received and the bytes they decoded to, in this direction.
    private var compressedBytes: Int64 = 0
    private var decodedBytes: Int64 = 0
    private let startedAt = EventLoop.monotonicNanoseconds()

    private var header: [UInt8] = []
    private var headerNeeded = 2
    /// The frame whose payload is passing.
    private var frame = FrameHead()
    private var remaining: UInt64 = 0
    private var maskOffset = 0
    /// The data message being assembled (its fragments), and a control frame.
    private var message: Message?
    private var control: Message?
    private var messageLimitHit = false
    /// Why reading stopped, once the bytes broke the framing.
    private(set) var broken: String?

    private struct FrameHead {
        var fin = true
        var compressed = false
        var opcode = Opcode.continuation
        var mask: (UInt8, UInt8, UInt8, UInt8)?
    }

    init(direction: Direction, deflate: Bool = false, noContextTakeover: Bool = false) {
        self.direction = direction
        inflater = deflate ? RawInflater() : nil
        resetsWindow = noContextTakeover
    }

    /// Reads `bytes`; `emit` gets each message as its last frame ends.
    mutating func observe(_ bytes: UnsafeRawBufferPointer, emit: (Message) -> Void) {
        var index = 0
        while index < bytes.count, broken == nil {
            if remaining == 0, header.count < headerNeeded {
                let take = min(headerNeeded - header.count, bytes.count - index)
                header.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)]))
                index += take
                if header.count == headerNeeded { headerGrew(emit: emit) }
                continue
            }
            let take = Int(min(remaining, UInt64(bytes.count - index)))
            payload(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)]))
            index += take
            remaining -= UInt64(take)
            if remaining == 0 { frameEnded(emit: emit) }
        }
    }

    /// The header so far reached the length it was known to need: it may need more, or be whole.
    private mutating func headerGrew(emit: (Message) -> Void) {
        let first = header[0]
        let second = header[1]
        let lengthCode = second & 0x7F
        let masked = second & 0x80 != 0
        let needed = 2 + (lengthCode == 126 ? 2 : lengthCode == 127 ? 8 : 0) + (masked ? 4 : 0)
        if header.count < needed {
            headerNeeded = needed
            return
        }
        var length = UInt64(lengthCode)
        var offset = 2
        if lengthCode == 126 {
            length = UInt64(header[2]) << 8 | UInt64(header[3])
            offset = 4
        } else if lengthCode == 127 {
            length = header[2..<10].reduce(0) { $0 << 8 | UInt64($1) }
            offset = 10
            // RFC 6455 §5.2: the most significant bit must be 0 (and the length fits an Int64).
            guard length >> 63 == 0 else { return broken = "a 64-bit payload length with its most significant bit set" }
        }
        guard let opcode = Opcode(rawValue: first & 0x0F) else {
            return broken = "a frame with the reserved opcode \(first & 0x0F)"
        }
        frame = FrameHead(
            fin: first & 0x80 != 0, compressed: first & 0x40 != 0, opcode: opcode,
            mask: masked ? (header[offset], header[offset + 1], header[offset + 2], header[offset + 3]) : nil)
        header.removeAll(keepingCapacity: true)
        headerNeeded = 2
        maskOffset = 0
        remaining = length
        switch opcode {
        case .close, .ping, .pong:
            guard frame.fin, length <= 125 else { return broken = "a control frame fragmented or over 125 bytes" }
            control = Message(
                direction: direction, opcode: opcode, size: Int64(length), preview: [], truncated: false,
                compressed: false, frames: 1)
        case .text, .binary:
            guard message == nil else { return broken = "a new message before the last one ended" }
            message = Message(
                direction: direction, opcode: opcode, size: Int64(length), preview: [], truncated: false,
                compressed: frame.compressed && inflater != nil, frames: 1)
            messageLimitHit = false
        case .continuation:
            guard message != nil else { return broken = "a continuation frame outside a message" }
            if let size = message?.size {
                let (sum, overflow) = size.addingReportingOverflow(Int64(length))
                message?.size = overflow ? .max : sum
            }
            message?.frames += 1
        }
        if length == 0 { frameEnded(emit: emit) }
    }

    /// Payload bytes of the current frame: the preview's share unmasked (all of it when compressed).
    private mutating func payload(_ bytes: UnsafeRawBufferPointer) {
        let isControl = frame.opcode.isControl
        let compressed = !isControl && (message?.compressed ?? false)
        let kept = isControl ? control?.preview.count ?? 0 : message?.preview.count ?? 0
        let wanted = compressed ? bytes.count : min(bytes.count, max(0, Self.previewLimit - kept))
        if wanted > 0 {
            var plain = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[0..<wanted]))
            if let mask = frame.mask {
                let key = [mask.0, mask.1, mask.2, mask.3]
                for i in 0..<plain.count { plain[i] ^= key[(maskOffset + i) & 3] }
            }
            if isControl {
                control?.preview += plain
            } else if compressed, let inflater {
                var preview = message?.preview ?? []
                if !messageLimitHit, !decode(plain, inflater, into: &preview) {
                    messageLimitHit = true
                    message?.truncated = true
                }
                message?.preview = preview
            } else {
                message?.preview += plain
            }
        }
        if !isControl, !compressed, wanted < bytes.count { message?.truncated = true }
        maskOffset += bytes.count
    }

    /// Decodes a compressed message's next wire bytes into its preview, within the limit
    /// (``decodeRatio``); `false` once the stream is corrupt or the limit is passed.
    private mutating func decode(_ wire: [UInt8], _ inflater: RawInflater, into preview: inout [UInt8]) -> Bool {
        guard decodes else { return false }
        compressedBytes += Int64(wire.count)
        let seconds = Int64((EventLoop.monotonicNanoseconds() &- startedAt) / 1_000_000_000)
        let limit =
            Self.decodeAllowance + Self.decodeRatio * compressedBytes + Self.decodeRefill * min(seconds, 1 << 30)
        let healthy = wire.withUnsafeBytes { bytes in
            inflater.feed(bytes) { piece in
                let room = Self.previewLimit - preview.count
                if room > 0 { preview.append(contentsOf: piece.prefix(room)) }
                decodedBytes += Int64(piece.count)
                return decodedBytes <= limit
            }
        }
        guard healthy else {
            // The window no longer follows the sender's: no later message of a window that
            // carries over can be decoded (one that resets starts afresh).
            decodes = false
            return false
        }
        return true
    }

    private mutating func frameEnded(emit: (Message) -> Void) {
        if frame.opcode.isControl {
            guard var done = control else { return }
            if done.opcode == .close, done.preview.count >= 2 {
                done.closeCode = UInt16(done.preview[0]) << 8 | UInt16(done.preview[1])
            }
            control = nil
            emit(done)
            return
        }
        guard frame.fin, var done = message else { return }
        if done.compressed, let inflater {
            // The sender dropped the last four bytes of the flush (RFC 7692 §7.2.1): given back.
            var preview = done.preview
            if !messageLimitHit { _ = decode([0, 0, 0xFF, 0xFF], inflater, into: &preview) }
            done.preview = preview
            if resetsWindow {
                inflater.reset()
                decodes = true
            }
        }
        done.truncated =
            done.compressed
            ? messageLimitHit || done.preview.count >= Self.previewLimit : done.size > Int64(done.preview.count)
        message = nil
        emit(done)
    }
}
