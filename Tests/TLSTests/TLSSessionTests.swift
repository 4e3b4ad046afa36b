import Foundation
import TLS
import Testing

/// A client session and a server session talking through their memory buffers (the bytes a
/// socket would carry): the client checks the server's leaf against the CA it was given and
/// the name it asked for.
@Suite("TLS sessions: client and server")
struct TLSSessionTests {
    /// Moves bytes both ways until both handshakes settle; the client's step last seen.
    static func handshake(_ client: TLSSession, _ server: TLSSession) -> TLSSession.Step {
        var clientStep = client.handshake()
        for _ in 0..<20 {
            client.withOutput { server.feed($0) }
            if case .failed = server.handshake() {}
            server.withOutput { client.feed($0) }
            clientStep = client.handshake()
            if clientStep != .needMore { break }
        }
        return clientStep
    }

    static func setup() throws -> (CertificateAuthority, TLSServerContext, String) {
        let authority = try CertificateAuthority.create(
            commonName: "Session test CA", organization: "Tests", validDays: 2)
        let server = try TLSServerContext(minter: LeafMinter(authority: authority, capacity: 4))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString).pem").path
        try authority.certificatePEM.write(toFile: path, atomically: true, encoding: .utf8)
        return (authority, server, path)
    }

    @Test("Trusted CA and matching name (a DNS name or an IP literal): established, and data flows both ways")
    func trusted() throws {
        let (_, serverContext, caFile) = try Self.setup()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        let context = try TLSClientContext(caFile: caFile)
        for name in ["parent.test", "127.0.0.1", "::1"] {
            let client = try context.makeSession(host: name)
            let server = try serverContext.makeSession(defaultName: name)
            #expect(Self.handshake(client, server) == .established, "\(name)")
            Array("CONNECT a:443".utf8).withUnsafeBytes { _ = client.write($0) }
            client.withOutput { server.feed($0) }
            var buffer = [UInt8](repeating: 0, count: 64)
            let read = buffer.withUnsafeMutableBytes { server.read(into: $0) }
            #expect(read == .bytes(13))
            #expect(String(decoding: buffer.prefix(13), as: UTF8.self) == "CONNECT a:443")
        }
    }

    @Test("The session a server sent is offered on the next connection to it: resumed, without its certificate")
    func resumption() throws {
        let (_, serverContext, caFile) = try Self.setup()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        let context = try TLSClientContext(caFile: caFile)
        let first = try context.makeSession(host: "parent.test")
        let firstServer = try serverContext.makeSession(defaultName: "parent.test")
        #expect(Self.handshake(first, firstServer) == .established)
        #expect(!first.resumed)
        // TLS 1.3 sends its tickets once the server has the client's Finished; the client meets
        // them when it reads.
        first.withOutput { firstServer.feed($0) }
        #expect(firstServer.handshake() == .established)
        firstServer.withOutput { first.feed($0) }
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(buffer.withUnsafeMutableBytes { first.read(into: $0) } == .needMore)
        let second = try context.makeSession(host: "parent.test")
        #expect(Self.handshake(second, try serverContext.makeSession(defaultName: "parent.test")) == .established)
        #expect(second.resumed, "the second connection resumed the first one's session")
        let other = try context.makeSession(host: "127.0.0.1")
        #expect(Self.handshake(other, try serverContext.makeSession(defaultName: "127.0.0.1")) == .established)
        #expect(!other.resumed, "sessions are kept per server name")
    }

    @Test("A leaf for another name, or from a CA not trusted: certificateUntrusted with OpenSSL's reason")
    func untrusted() throws {
        let (_, serverContext, caFile) = try Self.setup()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        // No SNI is sent for an address, so the server shows its default leaf: for another one.
        let mismatch = Self.handshake(
            try TLSClientContext(caFile: caFile).makeSession(host: "127.0.0.2"),
            try serverContext.makeSession(defaultName: "127.0.0.1"))
        #expect(mismatch == .failed(.certificateUntrusted("IP address mismatch")))
        let unknownCA = Self.handshake(
            try TLSClientContext().makeSession(host: "parent.test"),
            try serverContext.makeSession(defaultName: "parent.test"))
        guard case .failed(.certificateUntrusted(let reason)) = unknownCA else {
            Issue.record("the system store does not know the test CA: \(unknownCA)")
            return
        }
        #expect(reason.contains("issuer certificate"), "\(reason)")
        #expect(throws: TLSError.self) { try TLSClientContext(caFile: "/nonexistent/ca.pem") }
    }
}
