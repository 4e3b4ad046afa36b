#if canImport(Glibc)
    import Glibc
#endif

/// Text written straight into byte buffers on the per-request paths (access lines, response
/// heads): no intermediate `String` per number or piece.
extension Array where Element == UInt8 {
    /// `value`'s decimal digits (`String(value)` costs a generic description call and a copy).
    mutating func appendDecimal(_ value: Int64) {
        if value < 0 { append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 19 digits, filled from the end
        Swift.withUnsafeMutableBytes(of: &digits) { raw in
            var index = raw.count
            repeat {
                index -= 1
                raw[index] = UInt8(truncatingIfNeeded: 0x30 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[index...]))
        }
    }

    /// A literal's bytes.
    mutating func append(_ text: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A string's UTF-8 bytes, copied from its storage in one piece (appending its `utf8` view
    /// goes element by element through the generic path: about 170 instructions a call).
    mutating func append(utf8 text: String) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }
}

/// Writes bytes into memory sized beforehand: no uniqueness or capacity check per byte, no
/// reallocation. The writer's user makes sure the room is there (``Swift/Array/append(atMost:_:)``).
struct ByteWriter {
    let base: UnsafeMutablePointer<UInt8>
    /// Bytes written so far.
    private(set) var count = 0

    init(base: UnsafeMutablePointer<UInt8>) { self.base = base }

    @inline(__always)
    mutating func put(_ byte: UInt8) {
        base[count] = byte
        count += 1
    }

    mutating func put(_ text: StaticString) {
        (base + count).update(from: text.utf8Start, count: text.utf8CodeUnitCount)
        count += text.utf8CodeUnitCount
    }

    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    mutating func put(_ text: String) {
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes -> Int in
            guard let source = bytes.baseAddress else { return 0 }
            (base + count).update(from: source, count: bytes.count)
            return bytes.count
        }
        if let copied {
            count += copied
        } else {
            for byte in text.utf8 { put(byte) }
        }
    }

    /// A field value: its bytes as received when it is opaque (``HTTPFields/Field/opaque``: one
    /// byte per character, at most its UTF-8 count), else its UTF-8.
    @inline(__always)
    mutating func put(_ text: String, opaque: Bool) {
        guard opaque else { return put(text) }
        for scalar in text.unicodeScalars { put(UInt8(truncatingIfNeeded: scalar.value)) }
    }

    /// `value`'s decimal digits (at most 20 bytes).
    mutating func putDecimal(_ value: Int64) {
        if value < 0 { put(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits = 1
        var rest = magnitude / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var index = count + digits
        count = index
        repeat {
            index -= 1
            base[index] = UInt8(truncatingIfNeeded: 0x30 + magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
    }

    /// `12.345ms` for seconds (at most 26 bytes).
    mutating func putMilliseconds(_ seconds: Double) {
        var scaled = seconds * 1_000_000
        if !(scaled.magnitude < 9e18) { scaled = 0 }  // NaN or beyond Int64: no trap in a log line
        // `scaled.rounded()` (half away from zero) without calling libm: truncate, then look at
        // the fraction, which the subtraction gives exactly.
        var micros = Int64(scaled)
        let fraction = scaled - Double(micros)
        if fraction >= 0.5 { micros += 1 } else if fraction <= -0.5 { micros -= 1 }
        putDecimal(micros / 1000)
        put(0x2E)
        let thousandths = (micros % 1000).magnitude
        put(UInt8(0x30 + thousandths / 100))
        put(UInt8(0x30 + thousandths / 10 % 10))
        put(UInt8(0x30 + thousandths % 10))
        put(0x6D)
        put(0x73)
    }
}

extension Array where Element == UInt8 {
    /// Appends what `write` writes, at most `bound` bytes, through a ``ByteWriter``.
    ///
    /// The room is made with copies of zeros, in an array grown by `reserveCapacity`: that
    /// allocates through specialised code, where `Array(unsafeUninitializedCapacity:)` goes
    /// through an unspecialised standard-library function that looks up the array storage's
    /// type metadata on every call (about 330 instructions, more than the zeros cost).
    mutating func append(atMost bound: Int, _ write: (inout ByteWriter) -> Void) {
        let start = count
        // A new array gets exactly its room; a growing one (a log buffer) grows by append's
        // doubling, never to an exact size each time (that copies it whole on every append).
        if capacity == 0 { reserveCapacity(bound) }
        var left = bound
        while left > 0 {
            let piece = Swift.min(left, ZeroBytes.count)
            append(contentsOf: UnsafeBufferPointer(start: ZeroBytes.shared.base, count: piece))
            left -= piece
        }
        var written = 0
        withUnsafeMutableBufferPointer { buffer in
            var writer = ByteWriter(base: buffer.baseAddress! + start)
            write(&writer)
            written = writer.count
        }
        precondition(written <= bound, "ByteWriter overran its bound")
        removeLast(bound - written)
    }
}

extension UnsafeRawBufferPointer {
    /// The index of the first `byte` at or after `start` (memchr: a word at a time, where the
    /// generic `firstIndex(of:)` goes byte by byte through the collection protocols).
    func index(of byte: UInt8, from start: Int = 0) -> Int? {
        guard start < count, let base = baseAddress, let hit = memchr(base + start, Int32(byte), count - start)
        else { return nil }
        return base.distance(to: UnsafeRawPointer(hit))
    }
}

/// Zeros, made once: room in an array is made by copying from them.
private struct ZeroBytes: @unchecked Sendable {
    static let count = 4096
    static let shared = ZeroBytes()
    let base: UnsafePointer<UInt8>

    private init() {
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.count)
        bytes.initialize(repeating: 0, count: Self.count)
        base = UnsafePointer(bytes)
    }
}
