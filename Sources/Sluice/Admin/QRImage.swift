import Codec
import QRCode

/// A QR Code drawn as an image: PNG (1 bit per pixel, what any decoder reads) or SVG (what the
/// page shows, sharp at any size), with the quiet zone of four modules the standard asks for.
enum QRImage {
    static let quietZone = 4

    /// A grayscale PNG, `scale` pixels per module.
    static func png(_ code: QRCode, scale: Int = 8) -> [UInt8] {
        let modules = code.size + 2 * quietZone
        let side = modules * scale
        let rowBytes = (side + 7) / 8
        var raw = [UInt8]()
        raw.reserveCapacity((rowBytes + 1) * side)
        for y in 0..<side {
            raw.append(0)  // filter: none
            let row = y / scale - quietZone
            var byte: UInt8 = 0
            for x in 0..<side {
                let column = x / scale - quietZone
                let dark =
                    (0..<code.size).contains(row) && (0..<code.size).contains(column)
                    && code.isDark(row: row, column: column)
                // 1 is white in a 1-bit grayscale image.
                if !dark { byte |= 0x80 >> UInt8(x % 8) }
                if x % 8 == 7 || x == side - 1 {
                    raw.append(byte)
                    byte = 0
                }
            }
        }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header = [UInt8]()
        header.appendBigEndian(UInt32(side))
        header.appendBigEndian(UInt32(side))
        header += [1, 0, 0, 0, 0]  // bit depth 1, grayscale, deflate, no filter method, no interlace
        appendChunk("IHDR", header, to: &png)
        appendChunk("IDAT", ContentCoding.deflate.encode(raw), to: &png)
        appendChunk("IEND", [], to: &png)
        return png
    }

    /// An SVG: one path of unit squares on a white background.
    static func svg(_ code: QRCode) -> String {
        let side = code.size + 2 * quietZone
        var path = ""
        for row in 0..<code.size {
            var column = 0
            while column < code.size {
                guard code.isDark(row: row, column: column) else {
                    column += 1
                    continue
                }
                var run = 1
                while column + run < code.size, code.isDark(row: row, column: column + run) { run += 1 }
                path += "M\(column + quietZone) \(row + quietZone)h\(run)v1h-\(run)z"
                column += run
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" shape-rendering="crispEdges">\
            <rect width="\(side)" height="\(side)" fill="#fff"/><path d="\(path)" fill="#000"/></svg>

            """
    }

    private static func appendChunk(_ type: String, _ data: [UInt8], to png: inout [UInt8]) {
        png.appendBigEndian(UInt32(data.count))
        let typed = Array(type.utf8) + data
        png += typed
        png.appendBigEndian(crc32(typed))
    }

    /// CRC-32 (ISO 3309, the polynomial PNG and zlib use).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

extension [UInt8] {
    fileprivate mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [
            UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF),
        ])
    }
}
