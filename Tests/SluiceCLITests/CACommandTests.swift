import Foundation
import SluiceTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("sluice ca")
struct CACommandTests {
    @Test("ca init makes a 0600 key and a certificate; show and export never print the key")
    func initShowExport() throws {
        // Given an empty folder and a configuration pointing into it
        let directory = TestScratch.root.appendingPathComponent("ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cert = directory.appendingPathComponent("ca.pem").path
        let key = directory.appendingPathComponent("ca.key").path
        let config = try CLI.temporaryFile("tls: { ca_cert: \(cert), ca_key: \(key) }\n")
        defer { CLI.remove(config) }

        // When the CA is made
        let made = try CLI.run(["ca", "init", "--config", config])
        #expect(made.status == 0, "\(made.output)")
        #expect(made.output.contains("sha256:"))
        #expect(made.output.contains("update-ca-certificates") && made.output.contains("NODE_EXTRA_CA_CERTS"))
        #expect(made.output.contains("certutil -d sql:$HOME/.pki/nssdb"))
        let mode = try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let keyText = try String(contentsOfFile: key, encoding: .utf8)
        #expect(keyText.contains("PRIVATE KEY"))

        // Then init refuses to overwrite it, show describes it, export prints only the certificate
        #expect(try CLI.run(["ca", "init", "--config", config]).status != 0)
        let shown = try CLI.run(["ca", "show", "--config", config])
        #expect(shown.status == 0 && shown.output.contains(cert) && shown.output.contains("valid:"))
        let exported = try CLI.run(["ca", "export", "--config", config])
        #expect(exported.status == 0 && exported.output.contains("BEGIN CERTIFICATE"))
        for output in [made.output, shown.output, exported.output] {
            #expect(!output.contains("PRIVATE KEY"))
            #expect(!output.contains(keyText.split(separator: "\n")[1]))
        }
        let der = try CLI.run(["ca", "export", "--der", "--config", config])
        #expect(der.status == 0 && der.output.utf8.first == 0x30)  // a DER SEQUENCE (then the hints on stderr)
    }
}
