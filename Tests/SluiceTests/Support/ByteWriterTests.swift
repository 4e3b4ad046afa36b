import Testing

@testable import Sluice

@Suite("ByteWriter")
struct ByteWriterTests {
    /// The text `seconds` had in access lines before the writer: `.rounded()` microseconds.
    private func reference(_ seconds: Double) -> String {
        let micros = Int64((seconds * 1_000_000).rounded())
        let fraction = abs(micros % 1000)
        return "\(micros / 1000).\(fraction / 100)\(fraction / 10 % 10)\(fraction % 10)ms"
    }

    private func written(atMost bound: Int, into start: [UInt8] = [], _ write: (inout ByteWriter) -> Void) -> String {
        var bytes = start
        bytes.append(atMost: bound, write)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("Milliseconds round half away from zero, as Double.rounded() does")
    func milliseconds() {
        let values: [Double] = [
            0, 0.0000005, 0.0000004999, 0.0000015, 0.0012345, 0.0012355, 1.5, 12.345_678_9, 3_600.000_000_5, -0.0000005,
            -0.0012345, -2.5, 0.49999999999999994 / 1_000_000, 123_456_789.123_456,
        ]
        for value in values {
            #expect(written(atMost: 32) { $0.putMilliseconds(value) } == reference(value), "\(value)")
        }
        #expect(written(atMost: 32) { $0.putMilliseconds(.nan) } == "0.000ms")
        #expect(written(atMost: 32) { $0.putMilliseconds(.infinity) } == "0.000ms")
    }

    @Test("Decimals, strings short and long, and appending to bytes already there")
    func pieces() {
        for value: Int64 in [0, 7, 10, 99, 1_000, -1, -45, .max, .min] {
            #expect(written(atMost: 20) { $0.putDecimal(value) } == String(value))
        }
        let long = String(repeating: "abcdefghij", count: 10)
        #expect(
            written(atMost: 200, into: Array("log: ".utf8)) {
                $0.put("x-field"); $0.put(0x20); $0.put(long)
            }
                == "log: x-field " + long)
        #expect(
            written(atMost: 2000, into: [0x41]) { $0.put(String(repeating: "é", count: 400)) }
                == "A" + String(repeating: "é", count: 400))
        #expect(written(atMost: 8) { $0.put("") } == "")
    }
}
