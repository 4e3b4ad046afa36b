import Curl

/// A failed transfer in the client's terms: whose failure it was (a parent proxy, the origin, the
/// target guard) and why.
extension UpstreamTask {
    /// Whether a TLS failure was with the `https://` parent itself: an `http://` target has no
    /// TLS of its own, and libcurl keeps the verdict on the parent's certificate apart.
    private static func parentTLSFailed(_ request: UpstreamRequest, _ handle: EasyHandle?) -> Bool {
        request.url.scheme == "http" || (handle?.proxyVerifyResult ?? 0) != 0
    }

    func convert(_ error: CurlError) -> SluiceError {
        let host = currentRequest.url.host
        if let refusedTarget { return .forbidden(reason: refusedTarget) }
        if let parent = currentRequest.parent {
            // Through a parent: failures to reach it or refusals of the tunnel are the parent's.
            let connectCode = handle?.proxyConnectCode ?? 0
            if connectCode == 407 { return .upstreamFailed(reason: .parentAuthRequired(parent: parent.description)) }
            if connectCode >= 300 {
                return .upstreamFailed(
                    reason: .parentFailed(
                        parent: parent.description,
                        detail: "it answered \(connectCode) to the CONNECT for \(currentRequest.url.authority)"))
            }
            switch error.kind {
            case .resolve, .connect:
                return .upstreamFailed(reason: .parentFailed(parent: parent.description, detail: error.message))
            case .certificate where parent.scheme == .https && Self.parentTLSFailed(currentRequest, handle):
                let reason = Self.certificateReason(error.message)
                return .upstreamFailed(
                    reason: .parentFailed(
                        parent: parent.description,
                        detail: "its TLS certificate is not trusted (\(reason)); see upstream.proxy_ca_file"))
            case .tls where parent.scheme == .https && Self.parentTLSFailed(currentRequest, handle):
                return .upstreamFailed(
                    reason: .parentFailed(parent: parent.description, detail: "TLS with it failed (\(error.message))"))
            case .other where error.isProxyError:
                return .upstreamFailed(reason: .parentFailed(parent: parent.description, detail: error.message))
            default: break
            }
        }
        if error.isOutOfMemory, response == nil {
            // A header line too long for libcurl arrives whole at neither hook: say what it means.
            return .upstreamFailed(
                reason: .badResponse(
                    detail: "The origin's response header section is larger than libcurl accepts (100 KiB)."))
        }
        switch error.kind {
        case .resolve: return .upstreamFailed(reason: .resolveFailed(host: host))
        case .connect:
            return .upstreamFailed(reason: .connectFailed(host: currentRequest.url.authority, detail: error.message))
        case .timeout: return .upstreamFailed(reason: .timedOut(detail: error.message))
        case .tls:
            return .upstreamFailed(reason: .tlsFailed(detail: error.message + clientCertificateHint(error.message)))
        case .certificate:
            return .upstreamFailed(
                reason: .certificateInvalid(host: host, detail: Self.certificateReason(error.message)))
        case .pinMismatch: return .upstreamFailed(reason: .pinMismatch(host: host))
        case .badURL: return .badRequest(reason: .malformed("libcurl rejected the URL: \(error.message)"))
        case .receive, .send, .protocolViolation, .aborted, .other:
            return .upstreamFailed(reason: .badResponse(detail: error.message + clientCertificateHint(error.message)))
        }
    }

    /// What an origin that wants a client certificate, and got none, makes of the connection
    /// (its alert): said with what to do.
    private func clientCertificateHint(_ message: String) -> String {
        guard currentRequest.url.scheme == "https", currentRequest.trust?.clientCertificate == nil, response == nil
        else { return "" }
        // (Only on the alert's evidence: libcurl's words for a reset do not tell a new connection.)
        guard message.lowercased().contains("certificate required") else { return "" }
        return UpstreamTrust.clientCertificateHint
    }

    /// libcurl's words for a failed verification, in the client's terms (it can no longer see the
    /// origin's certificate itself).
    static func certificateReason(_ message: String) -> String {
        let text = message.lowercased()
        if text.contains("expired") { return "it has expired (\(message))" }
        if text.contains("not yet valid") { return "it is not valid yet (\(message))" }
        if text.contains("self-signed") || text.contains("self signed") {
            return "it is self-signed (\(message))"
        }
        if text.contains("local issuer") || text.contains("unknown ca") || text.contains("unable to get issuer") {
            return "its issuer is unknown (\(message))"
        }
        if text.contains("subject name") || text.contains("does not match") || text.contains("alternative")
            || text.contains("hostname mismatch") || text.contains("ip address mismatch")
        {
            return "it is not for this host name (\(message))"
        }
        return message
    }
}
