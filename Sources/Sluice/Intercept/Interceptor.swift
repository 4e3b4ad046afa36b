import EventIO
import TLS

/// Which CONNECT tunnels are opened (`tls.intercept`, rules with `intercept: true`, minus
/// `tls.passthrough` and the hosts a client recently refused), and the TLS server that opens
/// them with leaves from the local CA. Loop-confined.
final class Interceptor {
    let settings: Configuration.TLS
    let context: TLSServerContext
    /// Client address + host → until when (monotonic seconds) its tunnels stay blind.
    private var refusedUntil: [String: Double] = [:]

    init(settings: Configuration.TLS, authority: CertificateAuthority) throws(TLSError) {
        self.settings = settings
        context = try TLSServerContext(minter: LeafMinter(authority: authority, capacity: settings.leafCache))
    }

    /// Whether a CONNECT to `host` from `client` is intercepted.
    func intercepts(host: String, port: UInt16, client: String, rules: RuleBook, now: Double) -> Bool {
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        if settings.passthrough.contains(where: { $0.matches(bare) }) { return false }
        let listed =
            settings.intercept.contains { $0.matches(host: bare, port: port) }
            || rules.rules.contains { rule in rule.intercept && rule.match.host.map { $0.matches(bare) } == true }
        guard listed else { return false }
        let key = client + " " + bare.lowercased()
        if let until = refusedUntil[key] {
            if now < until { return false }
            refusedUntil[key] = nil
        }
        return true
    }

    /// A client refused the certificate for `host`: its tunnels there are blind for the window.
    func noteRefusal(host: String, client: String, now: Double) {
        guard settings.passthroughAfterFailure > 0 else { return }
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        refusedUntil[client + " " + bare.lowercased()] = now + Double(settings.passthroughAfterFailure) / 1000
        if refusedUntil.count > 10_000 { refusedUntil = refusedUntil.filter { $0.value > now } }
    }

    /// A TLS server session for a connection to `host` (its leaf unless the SNI names another).
    func makeSession(host: String) throws(TLSError) -> TLSSession {
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        return try context.makeSession(defaultName: bare)
    }
}
