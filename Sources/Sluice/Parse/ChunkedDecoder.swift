/// An incremental decoder for the chunked transfer coding (RFC 9112 §7.1), strict about framing:
/// hex sizes of at most 16 digits, bounded extensions and trailers, CRLF everywhere.
public struct ChunkedDecoder: Sendable {
    private enum State: Sendable, Equatable {
        case sizeStart
        case size(value: UInt64, digits: Int)
        case sizeWhitespace(value: UInt64)
        case chunkExtension(value: UInt64, length: Int, phase: ExtensionPhase)
        case sizeLF(value: UInt64)
        case data(remaining: UInt64)
        case dataCR
        case dataLF
        case trailerStart
        case trailerName
        case trailer
        case trailerLF
        case finalLF
        case done
    }

    /// Where a chunk extension's parse is (`;` BWS name [BWS `=` BWS (token | quoted-string)] BWS).
    private enum ExtensionPhase: Sendable, Equatable {
        case nameStart, name, afterName, valueStart, token, quoted, quotedEscape, afterValue
    }

    /// One call's result.
    public struct Step: Sendable, Equatable {
        /// Input bytes used.
        public var consumed: Int
        /// Decoded bytes written to the output.
        public var produced: Int
        /// Whether the last chunk and trailer section were read.
        public var finished: Bool
    }

    private var state = State.sizeStart
    private var trailerBytes = 0
    /// Decoded bytes so far.
    public private(set) var decodedBytes: Int64 = 0
    /// The trailer section's field lines as received, each ended by LF (bounded by
    /// ``maxMetadataBytes``): an origin's trailers are passed on.
    public private(set) var trailerLines: [UInt8] = []
    /// Largest body allowed.
    public let maxBodyBytes: Int64
    /// Largest extension text per chunk and total trailer section.
    public let maxMetadataBytes: Int
    /// Whether whitespace may end a size line with no extension after it (`4 \r\n`). RFC 9112
    /// §7.1 allows it only before a `;`: a client's body is held to that; an origin's is read as
    /// browsers read it (Chromium takes the size before the blanks).
    public let allowsBlankAfterSize: Bool

    /// A decoder at the start of a chunked body.
    public init(maxBodyBytes: Int64 = .max, maxMetadataBytes: Int = 8 * 1024, allowsBlankAfterSize: Bool = false) {
        self.maxBodyBytes = maxBodyBytes
        self.maxMetadataBytes = maxMetadataBytes
        self.allowsBlankAfterSize = allowsBlankAfterSize
    }

    /// Whether the whole body was decoded.
    public var isFinished: Bool { state == .done }

    /// Decodes from `input` into `output` until one of them is used up or the body ends.
    public mutating func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer)
        throws(SluiceError) -> Step
    {
        var consumed = 0
        var produced = 0
        while consumed < input.count, state != .done {
            if case .data(let remaining) = state {
                let room = output.count - produced
                guard room > 0 else { break }
                let amount = Int(min(UInt64(min(room, input.count - consumed)), remaining))
                if amount > 0, let destination = output.baseAddress, let source = input.baseAddress {
                    (destination + produced).copyMemory(from: source + consumed, byteCount: amount)
                }
                consumed += amount
                produced += amount
                let left = remaining - UInt64(amount)
                state = left == 0 ? .dataCR : .data(remaining: left)
                continue
            }
            let byte = input[consumed]
            consumed += 1
            try advance(byte)
        }
        return Step(consumed: consumed, produced: produced, finished: state == .done)
    }

    private mutating func advance(_ byte: UInt8) throws(SluiceError) {
        switch state {
        case .sizeStart:
            guard let digit = ChunkedDecoder.hexValue(byte) else { throw bad("chunk size is not hexadecimal") }
            state = .size(value: UInt64(digit), digits: 1)
        case .size(let value, let digits):
            if let digit = ChunkedDecoder.hexValue(byte) {
                guard digits < 16 else { throw bad("chunk size too long") }
                state = .size(value: value << 4 | UInt64(digit), digits: digits + 1)
            } else {
                try endOfSize(byte, value: value)
            }
        case .sizeWhitespace(let value):
            guard byte != 0x0D || allowsBlankAfterSize else { throw bad("whitespace after a chunk size, no extension") }
            try endOfSize(byte, value: value)
        case .chunkExtension(let value, let length, let phase):
            guard length < maxMetadataBytes else { throw bad("chunk extension too long") }
            if byte == 0x0D, phase != .quoted, phase != .quotedEscape {
                guard phase != .nameStart, phase != .valueStart else { throw bad("incomplete chunk extension") }
                state = .sizeLF(value: value)
                return
            }
            state = .chunkExtension(value: value, length: length + 1, phase: try extensionPhase(after: phase, byte))
        case .sizeLF(let value):
            guard byte == 0x0A else { throw bad("chunk size line not ended by CRLF") }
            if value == 0 {
                state = .trailerStart
            } else {
                guard value <= UInt64(Int64.max), decodedBytes <= maxBodyBytes - Int64(min(value, UInt64(Int64.max)))
                else { throw SluiceError.badRequest(reason: .bodyTooLarge(limit: Int(clamping: maxBodyBytes))) }
                decodedBytes += Int64(value)
                state = .data(remaining: value)
            }
        case .data:
            break
        case .dataCR:
            guard byte == 0x0D else { throw bad("chunk data longer than its size") }
            state = .dataLF
        case .dataLF:
            guard byte == 0x0A else { throw bad("chunk data not ended by CRLF") }
            state = .sizeStart
        case .trailerStart:
            if byte == 0x0D {
                state = .finalLF
            } else {
                guard RequestParser.isTokenByte(byte) else { throw bad("invalid trailer field name") }
                try countTrailer()
                trailerLines.append(byte)
                state = .trailerName
            }
        case .trailerName:
            try countTrailer()
            trailerLines.append(byte)
            if byte == UInt8(ascii: ":") {
                state = .trailer
            } else {
                guard RequestParser.isTokenByte(byte) else { throw bad("invalid trailer field name") }
            }
        case .trailer:
            if byte == 0x0D {
                state = .trailerLF
            } else {
                guard byte != 0x0A, byte == 0x09 || (byte >= 0x20 && byte != 0x7F) || byte >= 0x80 else {
                    throw bad("invalid byte in trailer")
                }
                try countTrailer()
                trailerLines.append(byte)
            }
        case .trailerLF:
            guard byte == 0x0A else { throw bad("trailer line not ended by CRLF") }
            trailerLines.append(0x0A)
            state = .trailerStart
        case .finalLF:
            guard byte == 0x0A else { throw bad("chunked body not ended by CRLF") }
            state = .done
        case .done:
            break
        }
    }

    private mutating func endOfSize(_ byte: UInt8, value: UInt64) throws(SluiceError) {
        switch byte {
        case 0x20, 0x09: state = .sizeWhitespace(value: value)
        case UInt8(ascii: ";"): state = .chunkExtension(value: value, length: 0, phase: .nameStart)
        case 0x0D: state = .sizeLF(value: value)
        default: throw bad("invalid byte after chunk size")
        }
    }

    /// The next phase of a chunk extension after `byte` (RFC 9112 §7.1.1), or a framing error.
    private func extensionPhase(after phase: ExtensionPhase, _ byte: UInt8) throws(SluiceError) -> ExtensionPhase {
        let blank = byte == 0x20 || byte == 0x09
        let token = RequestParser.isTokenByte(byte)
        switch phase {
        case .nameStart:
            if blank { return .nameStart }
            if token { return .name }
        case .name, .afterName:
            if token, phase == .name { return .name }
            if blank { return .afterName }
            if byte == UInt8(ascii: "=") { return .valueStart }
            if byte == UInt8(ascii: ";") { return .nameStart }
        case .valueStart:
            if blank { return .valueStart }
            if byte == UInt8(ascii: "\"") { return .quoted }
            if token { return .token }
        case .token, .afterValue:
            if token, phase == .token { return .token }
            if blank { return .afterValue }
            if byte == UInt8(ascii: ";") { return .nameStart }
        case .quoted:
            if byte == UInt8(ascii: "\"") { return .afterValue }
            if byte == UInt8(ascii: "\\") { return .quotedEscape }
            if byte == 0x09 || (byte >= 0x20 && byte != 0x7F) { return .quoted }
        case .quotedEscape:
            if byte == 0x09 || (byte >= 0x20 && byte != 0x7F) { return .quoted }
        }
        throw bad("invalid chunk extension")
    }

    private mutating func countTrailer() throws(SluiceError) {
        trailerBytes += 1
        guard trailerBytes <= maxMetadataBytes else { throw bad("trailer section too large") }
    }

    private func bad(_ what: String) -> SluiceError { .badRequest(reason: .malformed(what)) }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
