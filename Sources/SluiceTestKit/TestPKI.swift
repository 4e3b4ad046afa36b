import Foundation
import TLS

/// A test CA written to a folder, and server certificates it issues (PEM files), for origins
/// started by the tests.
public struct TestPKI: Sendable {
    public let authority: CertificateAuthority
    /// The CA certificate's file (what Sluice's `tls.ca_file` trusts for the origin).
    public let caPath: String
    let directory: URL

    public init(in directory: URL, commonName: String = "Test origin CA") throws {
        self.directory = directory
        authority = try CertificateAuthority.create(commonName: commonName, organization: "Tests", validDays: 2)
        caPath = directory.appendingPathComponent("origin-ca.pem").path
        try authority.certificatePEM.write(toFile: caPath, atomically: true, encoding: .utf8)
    }

    /// A certificate for `name` and its key, as files: (certificate, key).
    public func serverFiles(for name: String = "localhost") throws -> (certificate: String, key: String) {
        let issued = try authority.issueServerCertificate(for: name, validFrom: -1, validDays: 2, selfSigned: false)
        let certificate = directory.appendingPathComponent("\(name).pem").path
        let key = directory.appendingPathComponent("\(name).key").path
        try issued.certificate.write(toFile: certificate, atomically: true, encoding: .utf8)
        try issued.key.write(toFile: key, atomically: true, encoding: .utf8)
        return (certificate, key)
    }
}
