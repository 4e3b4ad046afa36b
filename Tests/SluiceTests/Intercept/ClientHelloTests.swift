import Testing

@testable import Sluice

@Suite("ClientHello and its JA4 fingerprint")
struct ClientHelloTests {
    /// A TLS 1.3 ClientHello with the cipher suites, extensions and signature algorithms of the
    /// JA4 specification's worked example (Chrome), GREASE values among them, in record form.
    static func chromeHello(recordSize: Int = 16384) -> [UInt8] {
        func u16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
        func vector16(_ bytes: [UInt8]) -> [UInt8] { u16(UInt16(bytes.count)) + bytes }
        let ciphers: [UInt16] = [
            0x2A2A, 0x1301, 0x1302, 0x1303, 0xC02B, 0xC02F, 0xC02C, 0xC030, 0xCCA9, 0xCCA8, 0xC013, 0xC014,
            0x009C, 0x009D, 0x002F, 0x0035,
        ]
        let signatures: [UInt16] = [0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601]
        var extensions: [UInt8] = []
        func add(_ type: UInt16, _ data: [UInt8] = []) { extensions += u16(type) + vector16(data) }
        add(0x3A3A)  // GREASE
        add(0x0000, vector16([0] + vector16(Array("api.example".utf8))))
        for type: UInt16 in [0x0017, 0xFF01, 0x000A, 0x000B, 0x0023] { add(type, [0]) }
        add(0x0010, vector16([2] + Array("h2".utf8) + [8] + Array("http/1.1".utf8)))
        add(0x0005, [1, 0, 0, 0, 0])
        add(0x000D, vector16(signatures.flatMap(u16)))
        add(0x0012)
        add(0x0033, [0, 0])
        add(0x002D, [1, 1])
        add(0x002B, [6] + u16(0x5A5A) + u16(0x0304) + u16(0x0303))
        add(0x001B, [2, 0, 2])
        add(0x4469, [0, 0])
        add(0x0015, [0, 0])
        add(0x4A4A, [0])  // GREASE
        var body = u16(0x0303) + [UInt8](repeating: 7, count: 32) + [32] + [UInt8](repeating: 9, count: 32)
        body += vector16(ciphers.flatMap(u16)) + [1, 0] + vector16(extensions)
        let handshake = [1, UInt8(body.count >> 16), UInt8(body.count >> 8 & 0xFF), UInt8(body.count & 0xFF)] + body
        var records: [UInt8] = []
        var offset = 0
        while offset < handshake.count {
            let piece = Array(handshake[offset..<min(handshake.count, offset + recordSize)])
            records += [0x16, 3, 1] + u16(UInt16(piece.count)) + piece
            offset += piece.count
        }
        return records
    }

    @Test("The JA4 of the specification's example, GREASE left out")
    func specificationExample() throws {
        let bytes = Self.chromeHello()
        guard case .hello(let hello) = bytes.withUnsafeBytes({ ClientHello.scan($0) }) else {
            Issue.record("not read")
            return
        }
        #expect(hello.serverName == "api.example")
        #expect(hello.alpn == ["h2", "http/1.1"])
        #expect(hello.fingerprint == "t13d1516h2_8daaf6152771_e5627efa2ab1")
    }

    @Test("A hello split over records and delivered in pieces: more is asked for until it is whole")
    func splitHello() {
        let bytes = Self.chromeHello(recordSize: 100)
        for cut in [0, 3, 5, 104, bytes.count - 1] {
            #expect(
                bytes.withUnsafeBytes { ClientHello.scan(UnsafeRawBufferPointer(rebasing: $0[0..<cut])) } == .needMore)
        }
        guard case .hello(let hello) = bytes.withUnsafeBytes({ ClientHello.scan($0) }) else {
            Issue.record("not read")
            return
        }
        #expect(hello.fingerprint == "t13d1516h2_8daaf6152771_e5627efa2ab1")
    }

    @Test("Not a ClientHello: another record type, a truncated body, a huge length")
    func notHello() {
        func refused(_ bytes: [UInt8]) -> Bool {
            if case .notClientHello = bytes.withUnsafeBytes({ ClientHello.scan($0) }) { return true }
            return false
        }
        #expect(refused([0x17, 3, 3, 0, 1, 0]), "application data")
        #expect(refused([0x16, 3, 1, 0, 5, 2, 0, 0, 1, 0]), "a ServerHello")
        #expect(refused([0x16, 3, 1, 0, 6, 1, 0, 0, 2, 3, 3]), "truncated")
        #expect(refused([0x16, 3, 1, 0xFF, 0xFF]), "a record too long")
    }
}
