import Foundation
import TLS
import Testing

/// One end of an in-memory byte pipe: what one session sends, the other receives (the bytes a
/// socket would carry, in order, as one stream).
final class PipeEnd: TLSTransport {
    var inbox: [UInt8] = []
    unowned(unsafe) var peer: PipeEnd!
    /// Everything sent so far.
    var sent = 0

    func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(inbox.count, buffer.count)
        inbox.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        inbox.removeFirst(count)
        return count
    }

    var receivable: Int { inbox.count }

    func send(_ bytes: UnsafeRawBufferPointer) {
        peer.inbox.append(contentsOf: bytes)
        sent += bytes.count
    }

    /// Two ends joined, for `client` and `server` (each session's transport is its end).
    static func join(_ client: TLSSession, _ server: TLSSession) -> (PipeEnd, PipeEnd) {
        let (a, b) = (PipeEnd(), PipeEnd())
        a.peer = b
        b.peer = a
        client.transport = a
        server.transport = b
        return (a, b)
    }
}

/// A client session and a server session talking through an in-memory pipe (the bytes a socket
/// would carry): the client checks the server's leaf against the CA it was given and the name it
/// asked for.
@Suite("TLS sessions: client and server")
struct TLSSessionTests {
    /// Runs both handshakes over a new pipe until they settle; the client's step last seen. The
    /// pipe's ends are kept in `pipes` (the sessions do not own their transports).
    static func handshake(
        _ client: TLSSession, _ server: TLSSession, keeping pipes: inout [PipeEnd]
    ) -> TLSSession.Step {
        let (a, b) = PipeEnd.join(client, server)
        pipes += [a, b]
        var clientStep = client.handshake()
        for _ in 0..<20 {
            if case .failed = server.handshake() {}
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
        var pipes: [PipeEnd] = []
        for name in ["parent.test", "127.0.0.1", "::1"] {
            let client = try context.makeSession(host: name)
            let server = try serverContext.makeSession(defaultName: name)
            #expect(Self.handshake(client, server, keeping: &pipes) == .established, "\(name)")
            let before = pipes[pipes.count - 2].sent
            Array("CONNECT a:443".utf8).withUnsafeBytes { _ = client.write($0) }
            // One record went out at once: a header, the text, its type and the tag.
            #expect(pipes[pipes.count - 2].sent - before == 5 + 13 + 1 + 16)
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
        var pipes: [PipeEnd] = []
        let first = try context.makeSession(host: "parent.test")
        let firstServer = try serverContext.makeSession(defaultName: "parent.test")
        #expect(Self.handshake(first, firstServer, keeping: &pipes) == .established)
        #expect(!first.resumed)
        // TLS 1.3 sends its tickets once the server has the client's Finished; the client meets
        // them when it reads.
        #expect(firstServer.handshake() == .established)
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(buffer.withUnsafeMutableBytes { first.read(into: $0) } == .needMore)
        let second = try context.makeSession(host: "parent.test")
        let secondServer = try serverContext.makeSession(defaultName: "parent.test")
        #expect(Self.handshake(second, secondServer, keeping: &pipes) == .established)
        #expect(second.resumed, "the second connection resumed the first one's session")
        let other = try context.makeSession(host: "127.0.0.1")
        let otherServer = try serverContext.makeSession(defaultName: "127.0.0.1")
        #expect(Self.handshake(other, otherServer, keeping: &pipes) == .established)
        #expect(!other.resumed, "sessions are kept per server name")
    }

    @Test("A leaf for another name, or from a CA not trusted: certificateUntrusted with OpenSSL's reason")
    func untrusted() throws {
        let (_, serverContext, caFile) = try Self.setup()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        // No SNI is sent for an address, so the server shows its default leaf: for another one.
        var pipes: [PipeEnd] = []
        let mismatchClient = try TLSClientContext(caFile: caFile).makeSession(host: "127.0.0.2")
        let mismatchServer = try serverContext.makeSession(defaultName: "127.0.0.1")
        let mismatch = Self.handshake(mismatchClient, mismatchServer, keeping: &pipes)
        #expect(mismatch == .failed(.certificateUntrusted("IP address mismatch")))
        let unknownClient = try TLSClientContext().makeSession(host: "parent.test")
        let unknownServer = try serverContext.makeSession(defaultName: "parent.test")
        let unknownCA = Self.handshake(unknownClient, unknownServer, keeping: &pipes)
        guard case .failed(.certificateUntrusted(let reason)) = unknownCA else {
            Issue.record("the system store does not know the test CA: \(unknownCA)")
            return
        }
        #expect(reason.contains("issuer certificate"), "\(reason)")
        #expect(throws: TLSError.self) { try TLSClientContext(caFile: "/nonexistent/ca.pem") }
    }
}
