import CTLS

#if canImport(Glibc)
    import Glibc
#endif

/// The local certificate authority that intercepted connections are shown: an ECDSA P-256 key
/// and a self-signed CA certificate (basicConstraints CA:TRUE, pathlen 0; keyUsage keyCertSign
/// and cRLSign). The key is held here and never leaves but through ``keyPEM`` (written once, to
/// a 0600 file, by whoever created it).
/// - SeeAlso: `X509_sign(3)`, `EVP_EC_gen(3)`, `PEM_write_bio_PrivateKey(3)`.
public final class CertificateAuthority: @unchecked Sendable {
    let certificate: OpaquePointer
    let key: OpaquePointer

    private init(certificate: OpaquePointer, key: OpaquePointer) {
        self.certificate = certificate
        self.key = key
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(key)
    }

    /// Creates a new CA.
    /// - Parameters:
    ///   - commonName: the subject's CN (it names Sluice, the machine and the date).
    ///   - validDays: how long it is valid, from one day back.
    public static func create(commonName: String, organization: String, validDays: Int) throws(TLSError)
        -> CertificateAuthority
    {
        guard let key = ctls_ec_p256_key() else { throw TLSError("generate the CA key") }
        guard let certificate = X509_new() else {
            EVP_PKEY_free(key)
            throw TLSError("allocate the CA certificate")
        }
        let authority = CertificateAuthority(certificate: certificate, key: key)
        X509_set_version(certificate, 2)
        try setRandomSerial(certificate)
        X509_gmtime_adj(X509_getm_notBefore(certificate), -86_400)
        X509_gmtime_adj(X509_getm_notAfter(certificate), Int(validDays) * 86_400)
        X509_set_pubkey(certificate, key)
        let name = X509_get_subject_name(certificate)
        X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, organization, -1, -1, 0)
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, commonName, -1, -1, 0)
        X509_set_issuer_name(certificate, name)
        for (nid, value) in [
            (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
            (NID_key_usage, "critical,keyCertSign,cRLSign"),
            (NID_subject_key_identifier, "hash"),
        ] {
            try addExtension(certificate, issuer: certificate, nid: nid, value: value)
        }
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else { throw TLSError("sign the CA certificate") }
        return authority
    }

    /// Loads a CA from its PEM certificate and PEM private key.
    public static func load(certificatePEM: String, keyPEM: String) throws(TLSError) -> CertificateAuthority {
        guard let certificate = readPEM(certificatePEM, { PEM_read_bio_X509($0, nil, nil, nil) }) else {
            throw TLSError("read the CA certificate")
        }
        guard let key = readPEM(keyPEM, { PEM_read_bio_PrivateKey($0, nil, nil, nil) }) else {
            X509_free(certificate)
            throw TLSError("read the CA key")
        }
        let authority = CertificateAuthority(certificate: certificate, key: key)
        guard X509_check_private_key(certificate, key) == 1 else {
            throw TLSError("the CA key does not belong to the CA certificate")
        }
        return authority
    }

    // MARK: - What it says

    /// What the CA certificate says (subject, fingerprint, validity, PEM and DER).
    public var info: CertificateInfo { CertificateInfo(certificate) }

    /// The certificate, PEM.
    public var certificatePEM: String { info.pem }

    /// The private key, PEM (PKCS #8). Only for writing the key file once.
    public var keyPEM: String { writePEM { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) } }

    /// SHA-256 of the DER certificate, as colon-separated upper-case hex.
    public var sha256Fingerprint: String { info.sha256Fingerprint }

    /// The subject, one line (`O=Sluice, CN=…`).
    public var subject: String { info.subject }

    // MARK: - Helpers shared with the leaf minter

    static func setRandomSerial(_ certificate: OpaquePointer) throws(TLSError) {
        var bytes = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&bytes, 16) == 1 else { throw TLSError("draw a serial number") }
        bytes[0] &= 0x7F  // positive
        bytes[0] |= 0x01  // and never zero-length
        guard let number = BN_bin2bn(bytes, 16, nil) else { throw TLSError("make a serial number") }
        defer { BN_free(number) }
        let serial = X509_get_serialNumber(certificate)
        guard BN_to_ASN1_INTEGER(number, serial) != nil else { throw TLSError("set the serial number") }
    }

    static func addExtension(_ certificate: OpaquePointer, issuer: OpaquePointer, nid: Int32, value: String)
        throws(TLSError)
    {
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer, certificate, nil, nil, 0)
        guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
            throw TLSError("make the certificate extension \(value)")
        }
        defer { X509_EXTENSION_free(ext) }
        guard X509_add_ext(certificate, ext, -1) == 1 else { throw TLSError("add the extension \(value)") }
    }

    static func readPEM(_ text: String, _ read: (OpaquePointer?) -> OpaquePointer?) -> OpaquePointer? {
        var text = text
        return text.withUTF8 { bytes in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            return read(bio)
        }
    }

    func writePEM(_ write: (OpaquePointer?) -> Int32) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return "" }
        var data: UnsafeMutablePointer<CChar>?
        let length = ctls_bio_mem_data(bio, &data)
        guard length > 0, let data else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    static func oneLine(_ name: OpaquePointer?) -> String {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        X509_NAME_print_ex(bio, name, 0, ctls_name_flags_oneline())
        var data: UnsafeMutablePointer<CChar>?
        let length = ctls_bio_mem_data(bio, &data)
        guard length > 0, let data else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    static func epochSeconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64 {
        guard let time else { return 0 }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return 0 }
        return Int64(timegm(&parts))
    }
}

extension CertificateAuthority {
    /// A server certificate with a key of its own, for origins that tests and benchmarks start:
    /// issued by this CA (or self-signed), for `name` (DNS, or IP for literals), valid from
    /// `validFrom` days from now for `validDays` days (a negative start with a short validity
    /// makes an expired certificate). PEM texts of the certificate and its key.
    public func issueServerCertificate(
        for name: String, validFrom: Int = -1, validDays: Int = 30, selfSigned: Bool = false
    ) throws(TLSError) -> (certificate: String, key: String) {
        guard let key = ctls_ec_p256_key() else { throw TLSError("generate a key") }
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw TLSError("allocate a certificate") }
        defer { X509_free(certificate) }
        X509_set_version(certificate, 2)
        try Self.setRandomSerial(certificate)
        X509_gmtime_adj(X509_getm_notBefore(certificate), validFrom * 86_400)
        X509_gmtime_adj(X509_getm_notAfter(certificate), (validFrom + validDays) * 86_400)
        X509_set_pubkey(certificate, key)
        let subject = X509_get_subject_name(certificate)
        X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8, name, -1, -1, 0)
        X509_set_issuer_name(certificate, selfSigned ? subject : X509_get_subject_name(self.certificate))
        let issuer = selfSigned ? certificate : self.certificate
        let san = (LeafMinter.isIPLiteral(name) ? "IP:" : "DNS:") + name
        try Self.addExtension(certificate, issuer: issuer, nid: NID_subject_alt_name, value: san)
        try Self.addExtension(certificate, issuer: issuer, nid: NID_basic_constraints, value: "critical,CA:FALSE")
        try Self.addExtension(certificate, issuer: issuer, nid: NID_ext_key_usage, value: "serverAuth")
        guard X509_sign(certificate, selfSigned ? key : self.key, EVP_sha256()) > 0 else {
            throw TLSError("sign the certificate")
        }
        let pem = writePEM { PEM_write_bio_X509($0, certificate) }
        let keyPEM = writePEM { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
        return (pem, keyPEM)
    }
}
