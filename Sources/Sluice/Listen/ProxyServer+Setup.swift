import EventIO
import TLS

#if canImport(Glibc)
    import Glibc
#endif

/// What a start reads from the configuration besides the listener: parent proxies and their TLS,
/// and the access settings worth a warning.
extension ProxyServer {
    /// The parent proxies in force (`upstream.proxy: env` reads the environment now); a parent
    /// that is this very listener would send every request around in a circle and is refused.
    static func parents(_ configuration: Configuration, listening address: SocketAddress) throws -> ParentRouting {
        let routing: ParentRouting
        switch configuration.upstream.parentRouting(environment: { getenv($0).map { String(cString: $0) } }) {
        case .success(let parsed): routing = parsed
        case .failure(let error): throw ParentProxyRefused(reason: "upstream.proxy: env: \(error)")
        }
        for parent in configuredParents(configuration, routing) {
            let loopbackName =
                parent.host == "localhost"
                || SocketAddress.parseIP(parent.host).map {
                    SocketAddress(ip: $0, port: 0).isLoopback || $0.allSatisfy { $0 == 0 }
                } == true
            if parent.port == address.port, loopbackName || parent.host == address.host {
                throw ParentProxyRefused(
                    reason: "the parent proxy \(parent) is this Sluice's own listener (\(address)): requests would loop"
                )
            }
        }
        return routing
    }

    /// Every parent named: `upstream.proxy` (or the environment's) and the rules' `proxy:`.
    private static func configuredParents(_ configuration: Configuration, _ routing: ParentRouting) -> [ParentProxy] {
        let ruleParents = (configuration.rules + [configuration.defaults]).compactMap { rule -> ParentProxy? in
            if case .parent(let parent)? = rule.proxy { return parent }
            return nil
        }
        return [routing.forHTTP, routing.forHTTPS].compactMap { $0 } + ruleParents
    }

    /// TLS for blind tunnels through `https://` parents, when any is configured; a CA file that
    /// cannot be read stops the start.
    static func parentTLS(_ configuration: Configuration, routing: ParentRouting) throws -> TLSClientContext? {
        let parents = configuredParents(configuration, routing)
        guard parents.contains(where: { $0.scheme == .https }) || routing.caFile != nil else { return nil }
        do {
            return try TLSClientContext(caFile: routing.caFile)
        } catch {
            throw ParentProxyRefused(reason: "upstream.proxy_ca_file: \(error)")
        }
    }

    /// Why a rule's client certificate cannot be used (a file missing, unreadable, or its key
    /// not the certificate's): `serve` refuses to start, `check-config` says it. Nothing of the
    /// key is said.
    public static func clientCertificateRefusal(_ configuration: Configuration) -> ParentProxyRefused? {
        for rule in configuration.rules + [configuration.defaults] {
            guard let trust = rule.tls, let certificate = trust.clientCertificate else { continue }
            do {
                _ = try TLSClientContext(certificate: certificate, key: trust.clientKey)
            } catch {
                let name = rule.name.isEmpty ? "defaults" : "rule \(rule.name)"
                return ParentProxyRefused(reason: "\(name): tls.client_certificate: \(error)")
            }
        }
        return nil
    }

    /// Why `serve` would not listen as configured: a listener on a LAN address (other devices
    /// reach it) needs access control, or it would be an open proxy by accident. `check-config`
    /// says it too.
    public static func listenRefusal(_ configuration: Configuration) -> ListenFailure? {
        guard let address = Configuration.socketAddress(configuration.listen) else {
            return ListenFailure(key: "listen", address: configuration.listen, code: 0)
        }
        if !address.isLoopback, configuration.allowClients.isEmpty, configuration.proxyAuth == nil {
            return ListenFailure.openProxy(configuration.listen)
        }
        return nil
    }

    /// What the settings leave open that is likely a mistake: every address allowed without a
    /// password (an open proxy by choice, said once), a password file others can read, a shared
    /// tier whose largest entry cannot be read within its timeout.
    public static func likelyMistakes(_ configuration: Configuration) -> [String] {
        var warnings: [String] = []
        // An entry the tier cannot hand over within `timeout` makes each lookup of it a failure
        // (three take the tier out) and is fetched and written again each time. 256 KiB a
        // millisecond is more than loopback gives with decoding (20 MB in 50 ms held, 40 did not).
        if let tier = configuration.cache.sharedTier, tier.maxEntry > Int64(tier.timeout) * 262_144 {
            warnings.append(
                "cache.shared.max_entry (\(tier.maxEntry >= 1 << 20 ? "\(tier.maxEntry >> 20) MiB" : "\(tier.maxEntry >> 10) KiB")) cannot be read within cache.shared.timeout (\(tier.timeout) ms): lookups of the largest entries would time out and count as failures; lower max_entry or raise timeout"
            )
        }
        if configuration.proxyAuth == nil,
            let everyone = configuration.allowClients.first(where: { $0.prefixLength == 0 })
        {
            warnings.append(
                "allow_clients lists \(everyone): whoever reaches this listener may use the proxy (an open proxy); list your networks, or add proxy_auth"
            )
        }
        var info = stat()
        if let file = configuration.proxyAuth?.passwordFile, stat(file, &info) == 0, info.st_mode & 0o077 != 0 {
            let mode = Int(info.st_mode)
            warnings.append(
                "proxy_auth.password_file \(file) is readable by others (mode \(String(mode & 0o777, radix: 8))): chmod 600 \(file)"
            )
        }
        return warnings
    }
}
