import EventIO
import QRCode

/// Devices on the LAN (`GET /device`, `/device/qr.png`, `/device/qr.svg`): where a phone reaches
/// the proxy, whether it needs credentials, the CA it must trust, and a QR code of the onboarding
/// URL for its camera.
extension AdminRoutes {
    /// The URL a device opens first: the proxy's LAN address (served directly, before the device
    /// is set up), or `http://sluice.internal/` when it listens on loopback only.
    var onboardingURL: String {
        proxy.environment.onboarding.proxyAddresses.first.map { "http://\($0)/" } ?? "http://\(Onboarding.host)/"
    }

    func device(_ parts: [String]) -> Answer {
        switch parts.dropFirst().first {
        case nil:
            return .json(200, deviceSummary())
        case "qr.png", "qr.svg":
            do {
                let code = try QRCode(onboardingURL, correction: .medium)
                return parts[1] == "qr.png"
                    ? .asset(contentType: "image/png", QRImage.png(code))
                    : .asset(contentType: "image/svg+xml", Array(QRImage.svg(code).utf8))
            } catch {
                return .error(500, "no QR code: \(error)")
            }
        default:
            return .error(404, "no such endpoint; try /device, /device/qr.png, /device/qr.svg")
        }
    }

    private func deviceSummary() -> JSONValue {
        let onboarding = proxy.environment.onboarding
        let configuration = proxy.configuration
        return .object([
            ("onboarding_url", .string(onboardingURL)),
            ("through_proxy_url", .string("http://\(Onboarding.host)/")),
            ("listen", .string(proxy.localAddress.description)),
            ("lan_addresses", .strings(onboarding.proxyAddresses)),
            ("reachable_from_lan", .bool(!onboarding.proxyAddresses.isEmpty)),
            ("allow_clients", .strings(configuration.allowClients.map(\.description))),
            (
                "credentials",
                configuration.proxyAuth.map {
                    .object([("user", .string($0.user)), ("password_file", .string($0.passwordFile))])
                } ?? .null
            ),
            ("intercepting", .bool(onboarding.intercepting)),
            (
                "ca",
                onboarding.certificate.map {
                    .object([("subject", .string($0.subject)), ("sha256", .string($0.sha256Fingerprint))])
                } ?? .null
            ),
        ])
    }
}
