import EventIO

/// CONNECT: refused, intercepted, a blind tunnel, or (plain HTTP inside, `sluice.internal`)
/// served here as requests for the tunnel's authority.
extension ClientConnection {
    func beginTunnel(_ request: ProxyRequest, host: String, port: UInt16) {
        // The onboarding page's name is never dialled: port 80 is served here, others refused.
        if Onboarding.names(host) {
            guard port == 80, request.bodyFraming == .none else {
                return rejectRequest(
                    request, .badRequest(reason: .onboardingNotFound("https://\(Onboarding.host)/")), closing: true)
            }
            connection.write(Tunnel.acceptedResponse)
            env.log(
                ExchangeRecord(
                    client: peerText, method: "CONNECT", url: "\(Onboarding.host):80", status: 200, bytesSent: 0,
                    duration: 0, upstreamTime: nil, error: nil, aborted: false))
            return tunnelCarriesHTTP(Authority(host: Onboarding.host, port: 80))
        }
        // A refused CONNECT closes: the client may already be sending the tunnel's first bytes
        // (a TLS ClientHello), which must not be read as the next request.
        if let refusal = env.exchanges.policy.connectRefusal(host: host, port: port, localClient: isLocal) {
            return rejectRequest(request, refusal, closing: true)
        }
        guard request.bodyFraming == .none else {
            return rejectRequest(request, .badRequest(reason: .malformed("CONNECT with a body")), closing: true)
        }
        if let interceptor = env.interceptor, interceptor.intercepts(host: host, port: port, rules: env.exchanges.rules)
        {
            return beginInterception(request, Authority(host: host, port: port))
        }
        let tunnel = Tunnel(
            client: self, environment: env.tunnels(), host: host, port: port, request: request)
        state = .tunnelling(tunnel)
        connection.setTimeouts(readMilliseconds: 0, writeMilliseconds: 0)
        tunnel.start()
    }

    /// The client spoke plain HTTP inside its CONNECT: from now on its requests are served here,
    /// as `http://` requests for the tunnel's authority.
    func tunnelCarriesHTTP(_ authority: Authority) {
        inside = .plain(authority)
        env.exchanges.stats.tunnelsCarryingHTTP += 1
        enterIdle()
        processInput()
    }
}
