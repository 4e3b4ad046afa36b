import TLS

/// A client's TLS ClientHello, read from the bytes after an intercepted CONNECT before the TLS
/// session sees them (RFC 8446 §4.1.2; a hello may span several records), and its JA4
/// fingerprint: what tells one TLS client (a pinning app, a browser, curl) from another on the
/// same address.
struct ClientHello: Equatable {
    var legacyVersion: UInt16 = 0
    /// Cipher suites, in the client's order.
    var ciphers: [UInt16] = []
    /// Extension types, in the client's order.
    var extensions: [UInt16] = []
    /// `supported_versions` (TLS 1.3 clients).
    var supportedVersions: [UInt16] = []
    /// `application_layer_protocol_negotiation` names, in order.
    var alpn: [String] = []
    /// `signature_algorithms`, in order.
    var signatureAlgorithms: [UInt16] = []
    /// The `server_name` host name.
    var serverName: String?

    /// What the buffered bytes hold.
    enum Scan: Equatable {
        /// The hello is not complete yet.
        case needMore
        case hello(ClientHello)
        /// Not a well-formed ClientHello (the TLS session will say what is wrong with it).
        case notClientHello(String)
    }

    /// The longest hello read (a post-quantum key share makes hellos of 1–2 KiB; 64 KiB is TLS's
    /// own limit for the handshake message's extensions).
    static let limit = 64 * 1024

    /// Reads the hello from the start of `bytes` (the raw stream after the CONNECT).
    static func scan(_ bytes: UnsafeRawBufferPointer) -> Scan {
        var handshake: [UInt8] = []
        var offset = 0
        while true {
            if handshake.count >= 4 {
                guard handshake[0] == 1 else {
                    return .notClientHello("the first handshake message is not a ClientHello")
                }
                let length = Int(handshake[1]) << 16 | Int(handshake[2]) << 8 | Int(handshake[3])
                guard length <= limit else { return .notClientHello("a ClientHello longer than \(limit) bytes") }
                if handshake.count >= 4 + length {
                    return handshake.withUnsafeBytes { parse(UnsafeRawBufferPointer(rebasing: $0[4..<(4 + length)])) }
                }
            }
            guard bytes.count - offset >= 5 else { return .needMore }
            guard bytes[offset] == 0x16 else { return .notClientHello("not a TLS handshake record") }
            guard bytes[offset + 1] == 3 else { return .notClientHello("not a TLS record version") }
            let length = Int(bytes[offset + 3]) << 8 | Int(bytes[offset + 4])
            guard length > 0, length <= 16384 + 256 else { return .notClientHello("a TLS record of \(length) bytes") }
            guard bytes.count - offset - 5 >= length else { return .needMore }
            handshake.append(contentsOf: bytes[(offset + 5)..<(offset + 5 + length)])
            offset += 5 + length
            if handshake.count > limit + 4 { return .notClientHello("a ClientHello longer than \(limit) bytes") }
        }
    }

    /// Parses the ClientHello body (after the handshake header).
    private static func parse(_ body: UnsafeRawBufferPointer) -> Scan {
        var reader = Reader(bytes: body)
        var hello = ClientHello()
        guard let version = reader.u16(), reader.skip(32), let sessionLength = reader.u8(),
            reader.skip(Int(sessionLength)),
            let cipherBytes = reader.vector16(), cipherBytes.count % 2 == 0,
            let compressionLength = reader.u8(), reader.skip(Int(compressionLength))
        else { return .notClientHello("a truncated ClientHello") }
        hello.legacyVersion = version
        hello.ciphers = Reader.u16List(cipherBytes)
        guard reader.remaining > 0 else { return .hello(hello) }  // no extensions (TLS 1.2 and older may omit them)
        guard let extensionBytes = reader.vector16(), reader.remaining == 0 else {
            return .notClientHello("a ClientHello with bytes after its extensions")
        }
        var extensions = Reader(bytes: extensionBytes)
        while extensions.remaining > 0 {
            guard let type = extensions.u16(), let data = extensions.vector16() else {
                return .notClientHello("a truncated ClientHello extension")
            }
            hello.extensions.append(type)
            var inner = Reader(bytes: data)
            switch type {
            case 0x0000:  // server_name: a list of (type, name)
                if let list = inner.vector16() {
                    var names = Reader(bytes: list)
                    if names.u8() == 0, let name = names.vector16() {
                        hello.serverName = String(decoding: name, as: UTF8.self)
                    }
                }
            case 0x0010:  // ALPN: a list of 8-bit-length names
                if let list = inner.vector16() {
                    var names = Reader(bytes: list)
                    while names.remaining > 0, let length = names.u8(), let name = names.take(Int(length)) {
                        hello.alpn.append(String(decoding: name, as: UTF8.self))
                    }
                }
            case 0x000D:  // signature_algorithms
                if let list = inner.vector16() { hello.signatureAlgorithms = Reader.u16List(list) }
            case 0x002B:  // supported_versions: an 8-bit-length list
                if let length = inner.u8(), let list = inner.take(Int(length)) {
                    hello.supportedVersions = Reader.u16List(list)
                }
            default:
                break
            }
        }
        return .hello(hello)
    }

    /// GREASE values (RFC 8701) are random and left out of fingerprints.
    static func isGREASE(_ value: UInt16) -> Bool { value & 0x0F0F == 0x0A0A && value >> 8 == value & 0xFF }

    /// The JA4 fingerprint (FoxIO's JA4 specification, TCP): `t13d1516h2_8daaf6152771_e5627efa2ab1`,
    /// the version, SNI kind, counts and ALPN, then truncated SHA-256 digests of the sorted cipher
    /// list and of the sorted extension list with the signature algorithms.
    var fingerprint: String {
        let versions = supportedVersions.filter { !Self.isGREASE($0) }
        let version: String
        switch versions.max() ?? legacyVersion {
        case 0x0304: version = "13"
        case 0x0303: version = "12"
        case 0x0302: version = "11"
        case 0x0301: version = "10"
        case 0x0300: version = "s3"
        default: version = "00"
        }
        let ciphers = self.ciphers.filter { !Self.isGREASE($0) }
        let extensions = self.extensions.filter { !Self.isGREASE($0) }
        func count(_ number: Int) -> String { number < 10 ? "0\(min(number, 99))" : "\(min(number, 99))" }
        var alpnMark = "00"
        if let first = alpn.first, let head = first.unicodeScalars.first, let tail = first.unicodeScalars.last {
            if head.isASCIIAlphanumeric && tail.isASCIIAlphanumeric {
                alpnMark = String(head) + String(tail)
            } else {
                // The first and last characters of the value's hex.
                let hex = Digest.hex(first.utf8)
                alpnMark = String(hex.prefix(1) + hex.suffix(1))
            }
        }
        let a =
            "t" + version + (extensions.contains(0x0000) ? "d" : "i") + count(ciphers.count)
            + count(extensions.count) + alpnMark
        let b = ciphers.isEmpty ? "000000000000" : Self.digest(ciphers.sorted().map(Self.hex).joined(separator: ","))
        var extensionText = extensions.filter { $0 != 0x0000 && $0 != 0x0010 }.sorted().map(Self.hex)
            .joined(separator: ",")
        if !signatureAlgorithms.isEmpty {
            extensionText += "_" + signatureAlgorithms.map(Self.hex).joined(separator: ",")
        }
        let c = extensions.isEmpty ? "000000000000" : Self.digest(extensionText)
        return a + "_" + b + "_" + c
    }

    private static func hex(_ value: UInt16) -> String { Digest.hex([UInt8(value >> 8), UInt8(value & 0xFF)]) }

    private static func digest(_ text: String) -> String { String(Digest.sha256Hex(text).prefix(12)) }

    /// Big-endian fields over a buffer; every read checks the length.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        var remaining: Int { bytes.count - offset }

        mutating func u8() -> UInt8? {
            guard remaining >= 1 else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func u16() -> UInt16? {
            guard remaining >= 2 else { return nil }
            defer { offset += 2 }
            return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
        }

        mutating func skip(_ count: Int) -> Bool {
            guard remaining >= count else { return false }
            offset += count
            return true
        }

        mutating func take(_ count: Int) -> UnsafeRawBufferPointer? {
            guard remaining >= count else { return nil }
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
        }

        /// A vector with a 16-bit length.
        mutating func vector16() -> UnsafeRawBufferPointer? {
            guard let length = u16() else { return nil }
            return take(Int(length))
        }

        static func u16List(_ bytes: UnsafeRawBufferPointer) -> [UInt16] {
            stride(from: 0, to: bytes.count - 1, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        }
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIIAlphanumeric: Bool {
        (0x30...0x39).contains(value) || (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value)
    }
}
