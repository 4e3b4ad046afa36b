import Testing

@testable import Sluice

@Suite("ByteScan")
struct ByteScanTests {
    /// The byte-at-a-time answers the word-at-a-time scans must give.
    enum Plain {
        static func firstLineBreakOrControl(_ bytes: [UInt8], _ start: Int, _ end: Int) -> Int {
            (start..<end).first { bytes[$0] <= 0x0D } ?? end
        }
        static func isVisibleASCII(_ bytes: [UInt8]) -> Bool { bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F } }
        static func isASCII(_ bytes: [UInt8]) -> Bool { bytes.allSatisfy { $0 < 0x80 } }
        static func isPlainASCII(_ bytes: [UInt8]) -> Bool { bytes.allSatisfy { $0 >= 0x0E && $0 < 0x80 } }
        static func fieldValue(_ bytes: [UInt8]) -> ByteScan.ValueBytes {
            if bytes.contains(where: { !($0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F)) }) { return .forbidden }
            return bytes.contains { $0 >= 0x80 } ? .obsText : .ascii
        }
        static func containsLineBreakOrNUL(_ bytes: [UInt8]) -> Bool {
            bytes.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
        }
    }

    /// Every check, on `bytes` and on each suffix (so every alignment and every tail length).
    static func agree(_ bytes: [UInt8], _ comment: String) {
        for start in 0...min(bytes.count, 9) {
            let tail = Array(bytes[start...])
            bytes.withUnsafeBytes { whole in
                for end in [bytes.count, max(start, bytes.count - 3)] {
                    #expect(
                        ByteScan.firstLineBreakOrControl(whole, from: start, to: end)
                            == Plain.firstLineBreakOrControl(bytes, start, end), "\(comment) from \(start) to \(end)")
                }
            }
            tail.withUnsafeBytes { raw in
                #expect(ByteScan.isVisibleASCII(raw) == Plain.isVisibleASCII(tail), "\(comment) from \(start)")
                #expect(ByteScan.isASCII(raw) == Plain.isASCII(tail), "\(comment) from \(start)")
                #expect(ByteScan.isPlainASCII(raw) == Plain.isPlainASCII(tail), "\(comment) from \(start)")
                #expect(ByteScan.fieldValue(raw) == Plain.fieldValue(tail), "\(comment) from \(start)")
                #expect(
                    ByteScan.containsLineBreakOrNUL(raw) == Plain.containsLineBreakOrNUL(tail),
                    "\(comment) from \(start)")
            }
        }
    }

    @Test("Each byte value, alone or at every place in a run of ordinary bytes, is judged as byte by byte")
    func everyByteEverywhere() {
        // The values at the edges of each class, then all 256 at a few places: a borrow or carry
        // from one byte must not hide or invent an answer in the next.
        let edges: [UInt8] = [
            0x00, 0x01, 0x09, 0x0A, 0x0C, 0x0D, 0x0E, 0x1F, 0x20, 0x21, 0x7E, 0x7F, 0x80, 0x81, 0xC3, 0xFF,
        ]
        for byte in edges {
            for place in 0..<20 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 20)
                bytes[place] = byte
                Self.agree(bytes, "byte \(byte) at \(place)")
            }
        }
        for byte in 0...255 {
            for place in [0, 7, 8, 13] {
                var bytes = Array("0123456789abcdef".utf8)
                bytes[place] = UInt8(byte)
                Self.agree(bytes, "byte \(byte) at \(place)")
            }
        }
    }

    @Test("Runs of two special bytes, next to each other or apart, and random bytes agree too")
    func pairsAndRandom() {
        let specials: [UInt8] = [0x00, 0x09, 0x0D, 0x0E, 0x20, 0x7F, 0x80, 0xFF]
        for first in specials {
            for second in specials {
                for gap in 1..<10 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "Z"), count: 24)
                    bytes[3] = first
                    bytes[3 + gap] = second
                    Self.agree(bytes, "\(first) then \(second) \(gap) apart")
                }
            }
        }
        var generator = SystemRandomNumberGenerator()
        for round in 0..<300 {
            let count = Int.random(in: 0...40, using: &generator)
            // Mostly ordinary bytes, so that the answers are not all decided by the first word.
            let bytes = (0..<count).map { _ in
                Int.random(in: 0..<10, using: &generator) == 0
                    ? UInt8.random(in: 0...255, using: &generator) : UInt8.random(in: 0x21...0x7E, using: &generator)
            }
            Self.agree(bytes, "random round \(round): \(bytes)")
        }
    }

    @Test("Empty input: nothing found, nothing forbidden")
    func empty() {
        let none: [UInt8] = []
        none.withUnsafeBytes { raw in
            #expect(ByteScan.firstLineBreakOrControl(raw, from: 0, to: 0) == 0)
            #expect(ByteScan.isVisibleASCII(raw))
            #expect(ByteScan.fieldValue(raw) == .ascii)
            #expect(!ByteScan.containsLineBreakOrNUL(raw))
        }
    }
}
