import CTLS

#if canImport(Glibc)
    import Glibc
#endif

/// Leaf certificates minted per server name, signed by the local CA: SAN only (a DNS name, or an
/// IP address for literals), a random serial, valid from one day back for at most 397 days, all
/// sharing one P-256 key. Kept in a bounded least-recently-used cache. Loop-confined.
public final class LeafMinter {
    /// The CA that signs.
    public let authority: CertificateAuthority
    /// Most leaves kept.
    public let capacity: Int
    /// How long a leaf is valid, in days (CA/Browser Forum limit: 397).
    public let validDays: Int
    let key: OpaquePointer
    private var leaves: [String: Leaf] = [:]
    private var tick: UInt64 = 0
    /// Leaves minted since start.
    public private(set) var minted = 0
    /// Nanoseconds spent minting since start.
    public private(set) var mintingNanoseconds: UInt64 = 0

    final class Leaf {
        let certificate: OpaquePointer
        var lastUse: UInt64
        init(certificate: OpaquePointer, lastUse: UInt64) {
            self.certificate = certificate
            self.lastUse = lastUse
        }
        deinit { X509_free(certificate) }
    }

    public init(authority: CertificateAuthority, capacity: Int = 1024, validDays: Int = 397) throws(TLSError) {
        guard let key = ctls_ec_p256_key() else { throw TLSError("generate the leaf key") }
        self.key = key
        self.authority = authority
        self.capacity = max(1, capacity)
        self.validDays = min(validDays, 397)
    }

    deinit { EVP_PKEY_free(key) }

    /// Leaves kept now.
    public var count: Int { leaves.count }

    /// The leaf for `name` (a host name or an IP literal, without brackets), minted on first use.
    func certificate(for name: String, now: UInt64) throws(TLSError) -> OpaquePointer {
        tick &+= 1
        let lowered = name.lowercased()
        if let known = leaves[lowered] {
            known.lastUse = tick
            return known.certificate
        }
        let leaf = Leaf(certificate: try mint(lowered), lastUse: tick)
        mintingNanoseconds &+= monotonicNanoseconds() &- now
        minted += 1
        leaves[lowered] = leaf
        if leaves.count > capacity { trim() }
        return leaf.certificate
    }

    /// Mints a leaf for `name` (exposed for the minting benchmark and tests).
    public func mintedPEM(for name: String) throws(TLSError) -> String {
        let certificate = try self.certificate(for: name, now: monotonicNanoseconds())
        return authority.writePEM { PEM_write_bio_X509($0, certificate) }
    }

    private func mint(_ name: String) throws(TLSError) -> OpaquePointer {
        guard let certificate = X509_new() else { throw TLSError("allocate a leaf certificate") }
        var ok = false
        defer { if !ok { X509_free(certificate) } }
        X509_set_version(certificate, 2)
        try CertificateAuthority.setRandomSerial(certificate)
        X509_gmtime_adj(X509_getm_notBefore(certificate), -86_400)
        X509_gmtime_adj(X509_getm_notAfter(certificate), validDays * 86_400 - 86_400)
        X509_set_pubkey(certificate, key)
        X509_set_issuer_name(certificate, X509_get_subject_name(authority.certificate))
        let isAddress = LeafMinter.isIPLiteral(name)
        let san = (isAddress ? "IP:" : "DNS:") + name
        try CertificateAuthority.addExtension(
            certificate, issuer: authority.certificate, nid: NID_subject_alt_name, value: "critical," + san)
        try CertificateAuthority.addExtension(
            certificate, issuer: authority.certificate, nid: NID_basic_constraints, value: "critical,CA:FALSE")
        try CertificateAuthority.addExtension(
            certificate, issuer: authority.certificate, nid: NID_key_usage, value: "critical,digitalSignature")
        try CertificateAuthority.addExtension(
            certificate, issuer: authority.certificate, nid: NID_ext_key_usage, value: "serverAuth")
        try CertificateAuthority.addExtension(
            certificate, issuer: authority.certificate, nid: NID_authority_key_identifier, value: "keyid:always")
        guard X509_sign(certificate, authority.key, EVP_sha256()) > 0 else { throw TLSError("sign a leaf") }
        ok = true
        return certificate
    }

    /// Down to three quarters of the capacity, least recently used first (amortised).
    private func trim() {
        let order = leaves.sorted { $0.value.lastUse < $1.value.lastUse }
        for (name, _) in order.prefix(leaves.count - capacity * 3 / 4) { leaves[name] = nil }
    }

    /// Whether `name` is an IPv4 or IPv6 literal.
    public static func isIPLiteral(_ name: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1
    }
}

func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
