import TLS

/// TLS client contexts for connections Sluice opens to `https://` origins itself (an upgraded
/// exchange; everything else goes through libcurl), one per way of trusting (a rule's `tls:`),
/// each keeping its sessions for resumption. Loop-confined.
final class OriginTLSContexts {
    private var contexts: [Key: TLSClientContext] = [:]

    private struct Key: Hashable {
        let caFile: String?
        let verify: Bool
        let tls13Only: Bool
        let certificate: String?
        let key: String?
    }

    /// The context for `trust` (the system store, verified, when `nil`).
    func context(for trust: UpstreamTrust?) throws(TLSError) -> TLSClientContext {
        let key = Key(
            caFile: trust?.caFile, verify: trust?.verify ?? true, tls13Only: trust?.minVersion == .tls13,
            certificate: trust?.clientCertificate, key: trust?.clientKey)
        if let context = contexts[key] { return context }
        let context = try TLSClientContext(
            caFile: key.caFile, verify: key.verify, tls13Only: key.tls13Only, certificate: key.certificate,
            key: key.key)
        context.offer(protocols: ["http/1.1"])  // an upgrade is an HTTP/1.1 mechanism
        contexts[key] = context
        return context
    }
}
