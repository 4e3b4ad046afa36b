import CQRencode

/// A QR Code symbol made by libqrencode: a square of dark and light modules. The only importer
/// of libqrencode.
/// - SeeAlso: `QRcode_encodeString` in qrencode.h.
public struct QRCode: Sendable, Equatable {
    /// How much of the symbol may be damaged and still read (ISO/IEC 18004 error correction).
    public enum Correction: Sendable {
        case low, medium, quartile, high

        var level: QRecLevel {
            switch self {
            case .low: QR_ECLEVEL_L
            case .medium: QR_ECLEVEL_M
            case .quartile: QR_ECLEVEL_Q
            case .high: QR_ECLEVEL_H
            }
        }
    }

    /// Why no symbol was made.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Modules per side.
    public let size: Int
    /// The symbol's version (1–40).
    public let version: Int
    /// Row by row, `true` for a dark module.
    public let modules: [Bool]

    /// The symbol for `text` (bytes as they are, 8-bit mode), the smallest version that holds it.
    public init(_ text: String, correction: Correction = .medium) throws(Failure) {
        guard !text.isEmpty, !text.utf8.contains(0) else { throw Failure(description: "nothing to encode") }
        guard let symbol = QRcode_encodeString8bit(text, 0, correction.level) else {
            throw Failure(description: "the text is too long for a QR Code (\(text.utf8.count) bytes)")
        }
        defer { QRcode_free(symbol) }
        size = Int(symbol.pointee.width)
        version = Int(symbol.pointee.version)
        let data = UnsafeBufferPointer(start: symbol.pointee.data, count: size * size)
        // The lowest bit of each byte is the module's colour; the others say what it is part of.
        modules = data.map { $0 & 1 == 1 }
    }

    /// Whether the module at `row`, `column` is dark.
    public func isDark(row: Int, column: Int) -> Bool { modules[row * size + column] }
}
