import Codec
import Foundation
import Testing

@testable import Sluice

@Suite("WebSocket frames read on the way")
struct WebSocketFramesTests {
    /// A frame as a client (masked) or a server writes it.
    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool, rsv1: Bool = false)
        -> [UInt8]
    {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            bytes.append(maskBit | UInt8(payload.count))
        } else if payload.count < 65536 {
            bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: payload.count >> ($0 * 8)) }
        }
        guard masked else { return bytes + payload }
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        return bytes + key + payload.enumerated().map { $0.element ^ key[$0.offset & 3] }
    }

    static func read(_ bytes: [UInt8], pieces: Int, frames: inout WebSocketFrames) -> [WebSocketFrames.Message] {
        var messages: [WebSocketFrames.Message] = []
        var index = 0
        let step = max(1, bytes.count / pieces)
        while index < bytes.count {
            let end = min(bytes.count, index + step)
            bytes.withUnsafeBytes { all in
                frames.observe(UnsafeRawBufferPointer(rebasing: all[index..<end])) { messages.append($0) }
            }
            index = end
        }
        return messages
    }

    @Test(
        "Masked, fragmented text with a ping between its fragments, binary, a 70 000-byte message and a close, read in pieces of any size"
    )
    func pieces() {
        let big = [UInt8](repeating: 0x61, count: 70_000)
        let stream =
            Self.frame(0x1, Array("frag".utf8), fin: false, masked: true)
            + Self.frame(0x9, Array("ping".utf8), masked: true)
            + Self.frame(0x0, Array("mented".utf8), fin: true, masked: true)
            + Self.frame(0x2, [0, 1, 2, 255], masked: true)
            + Self.frame(0x1, big, masked: true)
            + Self.frame(0x8, [0x03, 0xE8] + Array("done".utf8), masked: true)
        for pieces in [1, 3, 7, 100, stream.count] {
            var frames = WebSocketFrames(direction: .send)
            let messages = Self.read(stream, pieces: pieces, frames: &frames)
            #expect(frames.broken == nil)
            #expect(messages.map(\.opcode) == [.ping, .text, .binary, .text, .close], "\(pieces) pieces")
            #expect(messages[0].preview == Array("ping".utf8))
            #expect(
                messages[1].preview == Array("fragmented".utf8) && messages[1].frames == 2 && !messages[1].truncated)
            #expect(messages[2].preview == [0, 1, 2, 255])
            #expect(messages[3].size == 70_000 && messages[3].preview.count == WebSocketFrames.previewLimit)
            #expect(messages[3].truncated)
            #expect(messages[4].closeCode == 1000 && messages[4].preview.dropFirst(2).elementsEqual("done".utf8))
        }
    }

    @Test("permessage-deflate: compressed messages are decoded for viewing, the window carried from one to the next")
    func compressed() {
        // Two messages compressed with one window (context takeover), each without its 00 00 FF FF tail.
        let first = Array("hello hello hello hello".utf8)
        let second = Array("hello hello hello again".utf8)
        let encoded = Deflate.messages([first, second])
        var frames = WebSocketFrames(direction: .receive, deflate: true)
        let stream =
            Self.frame(0x1, encoded[0], masked: false, rsv1: true)
            + Self.frame(0x1, encoded[1], masked: false, rsv1: true)
        let messages = Self.read(stream, pieces: 5, frames: &frames)
        #expect(messages.count == 2)
        #expect(messages.first?.preview == first && messages.first?.compressed == true)
        #expect(messages.last?.preview == second)
        #expect(messages.last?.size == Int64(encoded[1].count))
    }

    @Test(
        "A compressed message that expands past the decoding budget stops being decoded: for good when the window carries over, until the next message when it resets"
    )
    func decompressionBomb() {
        // 64 MiB of zeros deflate to about 64 KiB: far beyond 1 MiB + 32 bytes a compressed byte.
        // After them, a message that compresses to about its size (its bytes give the budget back).
        var generator = SystemRandomNumberGenerator()
        let after = (0..<(16 << 10)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for resets in [false, true] {
            let encoded = Deflate.zeros(64 << 20, then: after, resetting: resets)
            #expect(encoded.count == 2 && encoded[0].count < 200_000)
            var frames = WebSocketFrames(direction: .receive, deflate: true, noContextTakeover: resets)
            let stream =
                Self.frame(0x2, encoded[0], masked: false, rsv1: true)
                + Self.frame(0x2, encoded[1], masked: false, rsv1: true)
            let messages = Self.read(stream, pieces: 3, frames: &frames)
            #expect(messages.count == 2)
            // The preview of the bomb is its first KiB; reading stayed within the framing.
            #expect(messages.first?.preview == [UInt8](repeating: 0, count: WebSocketFrames.previewLimit))
            #expect(messages.first?.truncated == true && frames.broken == nil)
            if resets {
                // A window of its own: decoded again once the budget allows.
                #expect(messages.last?.preview == Array(after.prefix(WebSocketFrames.previewLimit)))
            } else {
                // The window no longer follows the sender's: the next message is not previewed.
                #expect(messages.last?.preview.isEmpty == true && messages.last?.truncated == true)
            }
        }
    }

    @Test("Bytes that break the framing stop the reading, never the relay: a reserved opcode, a long control frame")
    func broken() {
        var reserved = WebSocketFrames(direction: .receive)
        _ = Self.read(Self.frame(0x3, [1], masked: false), pieces: 1, frames: &reserved)
        #expect(reserved.broken != nil)
        var longPing = WebSocketFrames(direction: .receive)
        _ = Self.read(Self.frame(0x9, [UInt8](repeating: 0, count: 200), masked: false), pieces: 1, frames: &longPing)
        #expect(longPing.broken != nil)
    }

    @Test("A 64-bit payload length with its top bit set breaks the reading (RFC 6455 §5.2); it used to end the process")
    func hugeLength() {
        for masked in [false, true] {
            var frames = WebSocketFrames(direction: masked ? .send : .receive)
            let head: [UInt8] = [0x82, (masked ? 0x80 : 0) | 127] + [UInt8](repeating: 0xFF, count: 8)
            _ = Self.read(head + (masked ? [1, 2, 3, 4] : []), pieces: 1, frames: &frames)
            #expect(frames.broken?.contains("most significant bit") == true)
        }
        // The largest length allowed is read as a frame head, not refused.
        var frames = WebSocketFrames(direction: .receive)
        let largest: [UInt8] = [0x7F] + [UInt8](repeating: 0xFF, count: 7)
        _ = Self.read([0x02, 127] + largest, pieces: 1, frames: &frames)
        #expect(frames.broken == nil)
    }
}

/// Raw DEFLATE as a WebSocket sender writes it (RFC 7692 §7.2.1), with Python's zlib: one
/// compressor for all messages, a sync flush after each, the trailing 00 00 FF FF dropped.
enum Deflate {
    static func messages(_ messages: [[UInt8]]) -> [[UInt8]] { run(messages, zeros: 0, resetting: false) }

    /// `count` zero bytes as one message, then `message`; with a window of its own each when
    /// `resetting` (`no_context_takeover`).
    static func zeros(_ count: Int, then message: [UInt8], resetting: Bool) -> [[UInt8]] {
        run([message], zeros: count, resetting: resetting)
    }

    private static func run(_ messages: [[UInt8]], zeros: Int, resetting: Bool) -> [[UInt8]] {
        let script = """
            import sys, zlib, json
            c = zlib.compressobj(9, zlib.DEFLATED, -15)
            out = []
            for m in ([bytes(\(zeros))] if \(zeros) else []) + [bytes(m) for m in json.loads(sys.argv[1])]:
                if \(resetting ? "True" : "False"):
                    c = zlib.compressobj(9, zlib.DEFLATED, -15)
                data = c.compress(m) + c.flush(zlib.Z_SYNC_FLUSH)
                assert data.endswith(b"\\x00\\x00\\xff\\xff")
                out.append(list(data[:-4]))
            print(json.dumps(out))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c", script,
            "[" + messages.map { "[" + $0.map(String.init).joined(separator: ",") + "]" }.joined(separator: ",") + "]",
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        // (An argument over 128 KiB is refused: reading the pipe would then wait for ever.)
        guard (try? process.run()) != nil else { return [] }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (try? JSONSerialization.jsonObject(with: data) as? [[Int]])?.map { $0.map(UInt8.init) } ?? []
    }
}
