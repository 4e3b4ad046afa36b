import CTLS

/// What a certificate says, read from its PEM text: for `sluice ca show` and `ca export`
/// (which never need the key).
public struct CertificateInfo: Sendable {
    /// The subject, one line.
    public let subject: String
    /// SHA-256 of the DER, colon-separated hex.
    public let sha256Fingerprint: String
    /// Validity, seconds since the epoch.
    public let notBefore: Int64
    public let notAfter: Int64
    /// The certificate, PEM and DER.
    public let pem: String
    public let der: [UInt8]
    /// OpenSSL's hash of the subject name, eight hex digits: the `HASH.0` link a CA directory
    /// (`-CApath`, `/etc/ssl/certs`) finds it by.
    public let subjectHash: String

    /// Reads the first certificate of a PEM text.
    public init(pem text: String) throws(TLSError) {
        guard let certificate = CertificateAuthority.readPEM(text, { PEM_read_bio_X509($0, nil, nil, nil) }) else {
            throw TLSError("read the certificate")
        }
        defer { X509_free(certificate) }
        self.init(certificate)
    }

    init(_ certificate: OpaquePointer) {
        subject = CertificateAuthority.oneLine(X509_get_subject_name(certificate))
        let hash = String(X509_subject_name_hash(certificate), radix: 16)
        subjectHash = String(repeating: "0", count: max(0, 8 - hash.count)) + hash
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        X509_digest(certificate, EVP_sha256(), &digest, &length)
        sha256Fingerprint = digest.prefix(Int(length)).map { byte in
            let text = String(byte, radix: 16, uppercase: true)
            return text.count == 1 ? "0" + text : text
        }.joined(separator: ":")
        notBefore = CertificateAuthority.epochSeconds(X509_get0_notBefore(certificate))
        notAfter = CertificateAuthority.epochSeconds(X509_get0_notAfter(certificate))
        pem = Self.writePEM(certificate)
        var pointer: UnsafeMutablePointer<UInt8>?
        let count = i2d_X509(certificate, &pointer)
        if count > 0, let pointer {
            der = Array(UnsafeBufferPointer(start: pointer, count: Int(count)))
            ctls_free(pointer)
        } else {
            der = []
        }
    }

    private static func writePEM(_ certificate: OpaquePointer) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard PEM_write_bio_X509(bio, certificate) == 1 else { return "" }
        var data: UnsafeMutablePointer<CChar>?
        let length = ctls_bio_mem_data(bio, &data)
        guard length > 0, let data else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }
}
