import QRCode
import Testing

@Suite("QR Code symbols")
struct QRCodeTests {
    @Test("A URL makes a version 2 symbol with its three finder patterns")
    func finderPatterns() throws {
        let code = try QRCode("http://192.168.1.20:8080/", correction: .medium)
        #expect(code.size == 17 + 4 * code.version)
        #expect(code.version == 2)
        // Each finder pattern: a dark 7×7 ring, a light ring, a dark 3×3 centre.
        for (top, left) in [(0, 0), (0, code.size - 7), (code.size - 7, 0)] {
            for row in 0..<7 {
                for column in 0..<7 {
                    let ring = max(abs(row - 3), abs(column - 3))
                    #expect(code.isDark(row: top + row, column: left + column) == (ring != 2), "\(top),\(left)")
                }
            }
        }
    }

    @Test("More text or more correction needs a bigger symbol; empty text is refused")
    func sizes() throws {
        let short = try QRCode("http://sluice.internal/")
        let long = try QRCode(String(repeating: "x", count: 200))
        let robust = try QRCode("http://sluice.internal/", correction: .high)
        #expect(long.size > short.size)
        #expect(robust.version >= short.version)
        #expect(throws: QRCode.Failure.self) { try QRCode("") }
        #expect(throws: QRCode.Failure.self) { try QRCode(String(repeating: "x", count: 4000)) }
    }
}
