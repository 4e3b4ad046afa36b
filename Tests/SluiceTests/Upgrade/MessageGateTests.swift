import Testing

@testable import Sluice

/// The message gate of one direction (WebSocket message breakpoints), alone: bytes in, what it
/// writes on out.
@Suite("WebSocket message gate")
struct MessageGateTests {
    static func gate(written: @escaping ([UInt8]) -> Void) throws -> MessageGate {
        let point = try Breakpoint.parse(["stage": "messages", "direction": "send"], name: "chat").get()
        let gate = MessageGate(direction: .send, candidates: [point], limit: 1 << 20) { _, _, _, _ in nil }
        gate.write = { written(Array($0)) }
        return gate
    }

    @Test("A sender that ends inside a message being gathered, or inside a frame: what came goes on as it came")
    func endInsideAMessage() throws {
        nonisolated(unsafe) var written: [UInt8] = []
        let gate = try Self.gate { written += $0 }
        // A masked text fragment without FIN (gathered: a breakpoint may pause the message), then
        // the head of the next frame and two of its bytes.
        let fragment = WebSocketFramesTests.frame(0x1, Array("first-".utf8), fin: false, masked: true)
        let cut = Array(WebSocketFramesTests.frame(0x0, Array("second".utf8), masked: true).prefix(8))
        let bytes = fragment + cut
        #expect(bytes.withUnsafeBytes { gate.feed($0) } == bytes.count)
        #expect(written.isEmpty && !gate.isEmpty, "gathered, nothing passed yet")
        #expect(gate.passIncomplete())
        #expect(written == bytes && gate.isEmpty)
    }

    @Test("A text message's preview cut inside a character is shown as text up to that character, not as hex")
    func previewCutInsideACharacter() {
        let cut = [UInt8](repeating: UInt8(ascii: "a"), count: 1022) + [0xE2, 0x82]  // "€" is E2 82 AC
        let message = WebSocketFrames.Message(
            direction: .receive, opcode: .text, size: 1030, preview: cut, truncated: true, compressed: false, frames: 1)
        guard case .object(let members) = EventFeed.json(message, id: 1, time: 0) else {
            Issue.record("not an object")
            return
        }
        #expect(members.first { $0.0 == "text" }?.1 == .string(String(repeating: "a", count: 1022)))
        #expect(!members.contains { $0.0 == "hex" })
        // Binary stays hex; broken UTF-8 inside the text too.
        var broken = message
        broken.preview = [0x61, 0xFF, 0x61]
        guard case .object(let hex) = EventFeed.json(broken, id: 1, time: 0) else {
            Issue.record("not an object")
            return
        }
        #expect(hex.contains { $0.0 == "hex" })
    }
}
