import CCodec

/// Why a body could not be decoded.
public enum CodecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The decoded body would be larger than the limit.
    case tooLarge(limit: Int)
    /// The data is corrupt or truncated.
    case invalid(String)

    public var description: String {
        switch self {
        case .tooLarge(let limit): "decoded body larger than \(limit) bytes"
        case .invalid(let detail): "invalid compressed data: \(detail)"
        }
    }
}

/// The HTTP content codings Sluice decodes (RFC 9110 §8.4.1): gzip (zlib), deflate (zlib), br (brotli).
public enum ContentCoding: String, Sendable, CaseIterable {
    case gzip
    case deflate
    case brotli = "br"

    /// The coding a `Content-Encoding` token names (`x-gzip` is gzip, RFC 9110 §8.4.1.3); case-insensitive.
    public init?(token: String) {
        switch token.lowercased() {
        case "gzip", "x-gzip": self = .gzip
        case "deflate": self = .deflate
        case "br": self = .brotli
        default: return nil
        }
    }

    /// Decodes a whole body, never producing more than `limit` bytes.
    public func decode(_ input: UnsafeRawBufferPointer, limit: Int) throws(CodecError) -> [UInt8] {
        switch self {
        case .gzip: try Zlib.inflate(input, windowBits: 15 + 16, limit: limit, multipleMembers: true)
        case .deflate:
            // "deflate" is the zlib format (RFC 1950), but servers also send raw deflate (RFC 1951).
            try Zlib.inflate(
                input, windowBits: Zlib.hasZlibHeader(input) ? 15 : -15, limit: limit, multipleMembers: false)
        case .brotli: try Brotli.decode(input, limit: limit)
        }
    }

    /// Decodes a whole body held in an array.
    public func decode(_ input: [UInt8], limit: Int) throws(CodecError) -> [UInt8] {
        do {
            return try input.withUnsafeBytes { bytes throws(CodecError) in try decode(bytes, limit: limit) }
        } catch let error as CodecError {
            throw error
        } catch {
            throw .invalid("\(error)")
        }
    }

    /// Encodes a whole body (origins in tests, and anything that must send compressed bytes).
    public func encode(_ input: [UInt8]) -> [UInt8] {
        input.withUnsafeBytes { bytes in
            switch self {
            case .gzip: Zlib.deflate(bytes, windowBits: 15 + 16)
            case .deflate: Zlib.deflate(bytes, windowBits: 15)
            case .brotli: Brotli.encode(bytes)
            }
        }
    }
}

private enum Zlib {
    static let chunk = 64 * 1024

    static func hasZlibHeader(_ input: UnsafeRawBufferPointer) -> Bool {
        guard input.count >= 2 else { return false }
        let cmf = Int(input[0])
        let flg = Int(input[1])
        return cmf & 0x0F == 8 && (cmf << 8 | flg) % 31 == 0
    }

    static func inflate(
        _ input: UnsafeRawBufferPointer, windowBits: Int32, limit: Int, multipleMembers: Bool
    ) throws(CodecError) -> [UInt8] {
        guard input.count <= Int(UInt32.max) else { throw .tooLarge(limit: limit) }
        var stream = z_stream()
        guard sluice_inflate_init(&stream, windowBits) == Z_OK else { throw .invalid("zlib initialisation failed") }
        defer { inflateEnd(&stream) }
        guard let base = input.baseAddress?.assumingMemoryBound(to: Bytef.self), input.count > 0 else {
            throw .invalid("empty stream")
        }
        stream.next_in = UnsafeMutablePointer(mutating: base)
        stream.avail_in = uInt(input.count)
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        // A gzip member ended and what follows has produced nothing yet: another member, or
        // trailing bytes that are not one (padding some servers add), ignored as gzip(1) and
        // browsers ignore them.
        var afterMember = false
        while true {
            let (status, produced) = buffer.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                let status = CCodec.inflate(&stream, Z_NO_FLUSH)
                return (status, out.count - Int(stream.avail_out))
            }
            if produced > 0 {
                guard output.count + produced <= limit else { throw .tooLarge(limit: limit) }
                output.append(contentsOf: buffer[0..<produced])
                afterMember = false
            }
            switch status {
            case Z_OK:
                if stream.avail_in == 0 && produced == 0 {
                    if afterMember { return output }
                    throw .invalid("truncated stream")
                }
            case Z_STREAM_END:
                guard stream.avail_in > 0 else { return output }
                // gzip allows several members in a row (RFC 1952 §2.2).
                guard multipleMembers, inflateReset(&stream) == Z_OK else {
                    throw .invalid("data after the end of the stream")
                }
                afterMember = true
            case Z_BUF_ERROR:
                if stream.avail_in == 0 {
                    if afterMember { return output }
                    throw .invalid("truncated stream")
                }
            default:
                if afterMember { return output }
                let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
                throw .invalid(message)
            }
        }
    }

    static func deflate(_ input: UnsafeRawBufferPointer, windowBits: Int32) -> [UInt8] {
        var stream = z_stream()
        guard sluice_deflate_init(&stream, Z_DEFAULT_COMPRESSION, windowBits) == Z_OK else { return [] }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 64)
        var placeholder: UInt8 = 0
        let produced = output.withUnsafeMutableBufferPointer { out -> Int in
            withUnsafeMutablePointer(to: &placeholder) { empty in
                stream.next_in =
                    input.baseAddress.map {
                        UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
                    } ?? empty
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                _ = CCodec.deflate(&stream, Z_FINISH)
                return out.count - Int(stream.avail_out)
            }
        }
        output.removeLast(output.count - produced)
        return output
    }
}

private enum Brotli {
    static func decode(_ input: UnsafeRawBufferPointer, limit: Int) throws(CodecError) -> [UInt8] {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else {
            throw .invalid("brotli initialisation failed")
        }
        defer { BrotliDecoderDestroyInstance(state) }
        var availableIn = input.count
        var nextIn = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let (result, produced) = buffer.withUnsafeMutableBufferPointer { out -> (BrotliDecoderResult, Int) in
                var availableOut = out.count
                var nextOut = out.baseAddress
                let result = BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                return (result, out.count - availableOut)
            }
            if produced > 0 {
                guard output.count + produced <= limit else { throw .tooLarge(limit: limit) }
                output.append(contentsOf: buffer[0..<produced])
            }
            switch result {
            case BROTLI_DECODER_RESULT_SUCCESS:
                guard availableIn == 0 else { throw .invalid("data after the end of the stream") }
                return output
            case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: continue
            case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT: throw .invalid("truncated stream")
            default:
                let code = BrotliDecoderGetErrorCode(state)
                throw .invalid(String(cString: BrotliDecoderErrorString(code)))
            }
        }
    }

    static func encode(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        var size = BrotliEncoderMaxCompressedSize(input.count)
        if size == 0 { size = input.count + 1024 }
        var output = [UInt8](repeating: 0, count: size)
        let ok = output.withUnsafeMutableBufferPointer { out in
            BrotliEncoderCompress(
                BROTLI_DEFAULT_QUALITY, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, input.count,
                input.baseAddress?.assumingMemoryBound(to: UInt8.self), &size, out.baseAddress)
        }
        guard ok == BROTLI_TRUE else { return [] }
        output.removeLast(output.count - size)
        return output
    }
}

/// A DEFLATE stream decoded piece by piece, keeping only the first bytes of what it produces: raw
/// (RFC 1951) for WebSocket `permessage-deflate` messages (RFC 7692) decoded for viewing, with the
/// window carried from message to message unless the peers agreed `no_context_takeover`; or an
/// HTTP body's `gzip` or `deflate` coding (``init(coding:)``) checked as it streams.
public final class RawInflater {
    /// zlib keeps a pointer to its stream: it lives at one address.
    private let stream: UnsafeMutablePointer<z_stream>
    private var scratch = [UInt8](repeating: 0, count: 16 * 1024)
    private var healthy: Bool

    private var windowBits: Int32
    /// An HTTP `deflate` body: zlib's format or, as some servers send it, raw; told by its first
    /// bytes (as ``ContentCoding/decode(_:limit:)`` tells a whole one).
    private var detectsDeflate = false

    public init() {
        windowBits = -15
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        healthy = sluice_inflate_init(stream, -15) == Z_OK
    }

    /// An HTTP body's coding, streamed: `gzip` (members one after another) or `deflate`; `nil`
    /// for brotli, decoded whole only.
    public init?(coding: ContentCoding) {
        switch coding {
        case .gzip: windowBits = 15 + 16
        case .deflate:
            windowBits = 15
            detectsDeflate = true
        case .brotli: return nil
        }
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        healthy = sluice_inflate_init(stream, windowBits) == Z_OK
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    /// Decodes `input`, handing what it produces to `each` a piece at a time (never more than
    /// 16 KiB held); `false` once the stream is corrupt.
    public func feed(_ input: UnsafeRawBufferPointer, _ each: (UnsafeRawBufferPointer) -> Void) -> Bool {
        feed(
            input,
            until: { piece -> Bool in
                each(piece)
                return true
            })
    }

    /// ``feed(_:_:)`` that stops when `each` returns `false` (the rest of `input` is not
    /// decoded: the stream no longer follows the encoder's, and is given up); `false` once the
    /// stream is corrupt or was stopped.
    public func feed(_ input: UnsafeRawBufferPointer, until each: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        guard healthy else { return false }
        guard let base = input.baseAddress?.assumingMemoryBound(to: Bytef.self), input.count > 0 else { return true }
        if detectsDeflate {
            detectsDeflate = false
            if !Zlib.hasZlibHeader(input) {
                windowBits = -15
                healthy = inflateReset2(stream, -15) == Z_OK
                guard healthy else { return false }
            }
        }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base)
        stream.pointee.avail_in = uInt(input.count)
        while true {
            let (status, produced) = scratch.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                stream.pointee.next_out = out.baseAddress
                stream.pointee.avail_out = uInt(out.count)
                let status = CCodec.inflate(stream, Z_SYNC_FLUSH)
                return (status, out.count - Int(stream.pointee.avail_out))
            }
            if produced > 0, !scratch.withUnsafeBytes({ each(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) }) {
                healthy = false
                return false
            }
            switch status {
            case Z_OK:
                // More may be pending even with no input left (the output was full).
                if stream.pointee.avail_in == 0, produced < scratch.count { return true }
            case Z_BUF_ERROR:
                return true
            case Z_STREAM_END:
                // Another gzip member may follow.
                guard inflateReset(stream) == Z_OK else { return false }
                if stream.pointee.avail_in == 0 { return true }
            default:
                healthy = false
                return false
            }
        }
    }

    /// Starts over (a message after `no_context_takeover`).
    public func reset() {
        healthy = inflateReset(stream) == Z_OK || sluice_inflate_init(stream, windowBits) == Z_OK
    }
}
