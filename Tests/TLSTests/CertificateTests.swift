import Foundation
import TLS
import Testing

/// The local CA and its leaves, checked with the `openssl` command-line tool (an independent reader).
@Suite("Certificates")
struct CertificateTests {
    static func openssl(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let output = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cert-\(UUID().uuidString).pem").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("The CA: P-256, CA:TRUE with pathlen 0, keyCertSign and cRLSign, ten years, reloadable from PEM")
    func authority() throws {
        let ca = try CertificateAuthority.create(
            commonName: "Sluice local CA (test)", organization: "Sluice", validDays: 3650)
        let text = try Self.openssl(["x509", "-noout", "-text"], input: ca.certificatePEM).output
        #expect(text.contains("CA:TRUE, pathlen:0"))
        #expect(text.contains("Certificate Sign, CRL Sign"))
        #expect(text.contains("prime256v1") || text.contains("P-256"))
        #expect(ca.subject.contains("Sluice local CA (test)"))
        let years = Double(ca.info.notAfter - ca.info.notBefore) / (365.25 * 86_400)
        #expect(years > 9.9 && years < 10.1)
        #expect(ca.sha256Fingerprint.split(separator: ":").count == 32)
        let reloaded = try CertificateAuthority.load(certificatePEM: ca.certificatePEM, keyPEM: ca.keyPEM)
        #expect(reloaded.sha256Fingerprint == ca.sha256Fingerprint)
        let other = try CertificateAuthority.create(commonName: "other", organization: "x", validDays: 1)
        #expect(throws: TLSError.self) {
            try CertificateAuthority.load(certificatePEM: ca.certificatePEM, keyPEM: other.keyPEM)
        }
    }

    @Test(
        "Leaves: SAN only (DNS, or IP for literals), serverAuth, at most 397 days, verified by the CA, kept once per name"
    )
    func leaves() throws {
        let ca = try CertificateAuthority.create(commonName: "CA", organization: "Sluice", validDays: 3650)
        let caPath = try Self.file(ca.certificatePEM)
        defer { try? FileManager.default.removeItem(atPath: caPath) }
        let minter = try LeafMinter(authority: ca, capacity: 4)
        for (name, san) in [
            ("api.example.com", "DNS:api.example.com"), ("127.0.0.1", "IP Address:127.0.0.1"),
            ("::1", "IP Address:0:0:0:0:0:0:0:1"),
        ] {
            let pem = try minter.mintedPEM(for: name)
            let text = try Self.openssl(["x509", "-noout", "-text"], input: pem).output
            #expect(text.contains(san), "\(name)")
            #expect(text.contains("TLS Web Server Authentication"))
            #expect(!text.contains("Subject: CN"), "no common name: SAN only")
            let leafPath = try Self.file(pem)
            defer { try? FileManager.default.removeItem(atPath: leafPath) }
            let verified = try Self.openssl(["verify", "-CAfile", caPath, leafPath])
            #expect(verified.status == 0, "\(verified.output)")
            let dates = try Self.openssl(["x509", "-noout", "-checkend", String(397 * 86_400)], input: pem)
            #expect(dates.status != 0, "valid past 397 days")
        }
        // Cached per name: the same certificate again; bounded by the capacity.
        #expect(try minter.mintedPEM(for: "api.example.com") == minter.mintedPEM(for: "API.example.com"))
        for n in 0..<10 { _ = try minter.mintedPEM(for: "h\(n).test") }
        #expect(minter.count <= 4)
        #expect(minter.minted == 13)
    }
}
