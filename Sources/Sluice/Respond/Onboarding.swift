import TLS

/// The onboarding page: what a phone, an emulator or another computer needs to use this proxy.
/// Any client of the proxy reaches it as `http://sluice.internal/` (`.internal` is set aside for
/// private use, so the name is never forwarded), and a browser that is not set up yet reaches it
/// by asking the proxy's own address (`http://192.168.1.20:8080/`, what the admin page's QR code
/// holds). It offers the CA as PEM, as DER (`.crt`, what Android's installer takes) and as an
/// iOS/macOS configuration profile, with the steps for each platform. Nothing on it is secret:
/// the CA certificate is public, its key is never read here.
struct Onboarding: Sendable {
    /// The reserved name the page answers to through the proxy.
    static let host = "sluice.internal"

    /// Whether a request's host is that name (in any case, with or without the root's dot).
    static func names(_ host: String) -> Bool {
        // Every request asks: no allocation unless the length is right.
        let count = host.utf8.count
        guard count == 15 || count == 16 else { return false }
        let name = host.lowercased()
        return name == Onboarding.host || name == Onboarding.host + "."
    }

    /// The CA certificate (when there is one on disk), and whether HTTPS is intercepted.
    var certificate: CertificateInfo?
    var intercepting = false
    /// Where other devices reach the proxy (`host:port`; loopback when it listens there only).
    var proxyAddresses: [String] = []
    /// Whether the proxy asks for a user and password (`proxy_auth`).
    var needsCredentials = false
    /// The port the proxy listens on (an emulator on this computer reaches it there).
    var port: UInt16?

    /// One answer: status, content type, body and the file name a download gets.
    struct Answer: Equatable {
        let status: Int
        let contentType: String
        let body: [UInt8]
        var filename: String?
    }

    /// The paths it serves.
    enum Resource: String, CaseIterable {
        case page = "/"
        case pem = "/sluice-ca.pem"
        case der = "/sluice-ca.crt"
        case profile = "/sluice-ca.mobileconfig"
    }

    /// Whether a request is for the page (a `GET`/`HEAD` of one of its paths; the query ignored).
    static func resource(method: String, path: String) -> Resource? {
        guard method == "GET" || method == "HEAD" else { return nil }
        let bare = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return Resource(rawValue: bare.isEmpty ? "/" : String(bare))
    }

    /// The answer for a path of the page (`nil`: not one of its paths).
    /// `reachedAt`: the address the device asked for the page (its `Host`), named first when it
    /// is one of the proxy's.
    func answer(path: String, reachedAt: String? = nil) -> Answer? {
        guard let resource = Onboarding.resource(method: "GET", path: path) else { return nil }
        if resource == .page {
            var page = self
            if let reachedAt, let index = proxyAddresses.firstIndex(of: reachedAt.lowercased()) {
                page.proxyAddresses.insert(page.proxyAddresses.remove(at: index), at: 0)
            }
            return Answer(status: 200, contentType: "text/html; charset=utf-8", body: Array(page.page().utf8))
        }
        guard let certificate else {
            let text = "There is no CA yet: HTTPS is not intercepted (tls.intercept), so no certificate is needed.\n"
            return Answer(status: 404, contentType: "text/plain; charset=utf-8", body: Array(text.utf8))
        }
        switch resource {
        case .pem:
            return Answer(
                status: 200, contentType: "application/x-pem-file", body: Array(certificate.pem.utf8),
                filename: "sluice-ca.pem")
        case .der:
            return Answer(
                status: 200, contentType: "application/x-x509-ca-cert", body: certificate.der, filename: "sluice-ca.crt"
            )
        case .profile:
            return Answer(
                status: 200, contentType: "application/x-apple-aspen-config",
                body: Array(Onboarding.profile(certificate).utf8), filename: "sluice-ca.mobileconfig")
        case .page:
            return nil
        }
    }

    // MARK: - The configuration profile

    /// An iOS/macOS configuration profile with the CA as a root certificate payload
    /// (`com.apple.security.root`); its UUIDs come from the CA's fingerprint, so the same CA always
    /// makes the same profile (installing it again replaces it).
    static func profile(_ certificate: CertificateInfo) -> String {
        let digits = certificate.sha256Fingerprint.filter(\.isHexDigit).uppercased()
        func uuid(_ offset: Int) -> String {
            let hex = Array(digits.dropFirst(offset).prefix(32))
            guard hex.count == 32 else { return "00000000-0000-4000-8000-000000000000" }
            return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
        }
        let data = Digest.base64(certificate.der)
        var lines: [Substring] = []
        var rest = Substring(data)
        while !rest.isEmpty {
            lines.append(rest.prefix(64))
            rest = rest.dropFirst(64)
        }
        let name = escaped(certificate.subject)
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>PayloadContent</key>
            \t<array>
            \t\t<dict>
            \t\t\t<key>PayloadCertificateFileName</key>
            \t\t\t<string>sluice-ca.crt</string>
            \t\t\t<key>PayloadContent</key>
            \t\t\t<data>
            \(lines.map { "\t\t\t\($0)" }.joined(separator: "\n"))
            \t\t\t</data>
            \t\t\t<key>PayloadDescription</key>
            \t\t\t<string>Adds the Sluice local CA, so that Sluice can show this device's HTTPS traffic.</string>
            \t\t\t<key>PayloadDisplayName</key>
            \t\t\t<string>\(name)</string>
            \t\t\t<key>PayloadIdentifier</key>
            \t\t\t<string>dev.sluice.ca.\(uuid(0))</string>
            \t\t\t<key>PayloadType</key>
            \t\t\t<string>com.apple.security.root</string>
            \t\t\t<key>PayloadUUID</key>
            \t\t\t<string>\(uuid(0))</string>
            \t\t\t<key>PayloadVersion</key>
            \t\t\t<integer>1</integer>
            \t\t</dict>
            \t</array>
            \t<key>PayloadDescription</key>
            \t<string>The certificate authority of the Sluice proxy on your computer. Remove this profile to stop trusting it.</string>
            \t<key>PayloadDisplayName</key>
            \t<string>Sluice local CA</string>
            \t<key>PayloadIdentifier</key>
            \t<string>dev.sluice.profile.\(uuid(32))</string>
            \t<key>PayloadRemovalDisallowed</key>
            \t<false/>
            \t<key>PayloadType</key>
            \t<string>Configuration</string>
            \t<key>PayloadUUID</key>
            \t<string>\(uuid(32))</string>
            \t<key>PayloadVersion</key>
            \t<integer>1</integer>
            </dict>
            </plist>

            """
    }

    /// Text made safe for HTML and XML.
    static func escaped(_ text: String) -> String { HTMLText.escaped(text) }

    // MARK: - The page

    /// The HTML page: the proxy's address, the certificate in three forms with its fingerprint, and
    /// the steps per platform. No script; styles inline (the page's CSP allows nothing else).
    func page() -> String {
        let address = proxyAddresses.first ?? "this computer's address and Sluice's port"
        let port =
            self.port.map(String.init)
            ?? proxyAddresses.first.flatMap { $0.split(separator: ":").last.map(String.init) } ?? "PORT"
        let proxyLine =
            proxyAddresses.isEmpty
            ? "Sluice listens on this computer only; to reach it from a device, listen on a LAN address (listen: 0.0.0.0:8080 with allow_clients: [your network] or proxy_auth)."
            : "Set this device's HTTP proxy to <b>\(Onboarding.escaped(address))</b>"
                + (proxyAddresses.count > 1
                    ? " (or "
                        + proxyAddresses.dropFirst().map { "<b>\(Onboarding.escaped($0))</b>" }.joined(
                            separator: ", ") + ")" : "")
                + "."
        let credentialsLine =
            needsCredentials
            ? " The proxy asks for a user and password (proxy authentication): enter the ones the person running Sluice gives you. Android's Wi-Fi proxy settings have no place for them: for an Android device, ask for its network to be listed in allow_clients instead."
            : ""
        var certificateSection: String
        if let certificate {
            certificateSection = """
                <h2>2. Trust Sluice's certificate authority</h2>
                <p>\(intercepting ? "Sluice shows HTTPS for the hosts it is told to intercept; for that, this device must trust its CA." : "HTTPS is not intercepted now (tls.intercept is empty); trust the CA when it is.")
                Compare the fingerprint with the one <code>sluice ca show</code> prints on the computer.</p>
                <ul class="files">
                <li><a href="/sluice-ca.crt" download>sluice-ca.crt</a> (DER: Android, Windows, ChromeOS)</li>
                <li><a href="/sluice-ca.mobileconfig" download>sluice-ca.mobileconfig</a> (iOS, iPadOS, macOS profile)</li>
                <li><a href="/sluice-ca.pem" download>sluice-ca.pem</a> (PEM: Linux, Firefox, runtimes)</li>
                </ul>
                <p class="fp">\(Onboarding.escaped(certificate.subject))<br>SHA-256 \(certificate.sha256Fingerprint)</p>
                """
        } else {
            certificateSection = """
                <h2>2. No certificate needed</h2>
                <p>Sluice does not intercept HTTPS now (nothing under tls.intercept): HTTP is seen, HTTPS goes through
                blind tunnels. Once interception is on, this page offers the CA.</p>
                """
        }
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Sluice: set up this device</title>
            <style>
            body{font:16px/1.45 system-ui,sans-serif;max-width:44rem;margin:1.5rem auto;padding:0 1rem;color:#1d2330}
            h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:1.6rem}h3{font-size:1rem;margin:1rem 0 .3rem}
            code{background:#eef1f6;padding:0 .25rem;border-radius:3px;font-size:.92em}
            .files a{font-weight:600}.fp{font:13px ui-monospace,monospace;word-break:break-all;color:#4a5568}
            details{border-top:1px solid #dde2ea;padding:.4rem 0}summary{font-weight:600;cursor:pointer}
            </style></head><body>
            <h1>Set up this device for Sluice</h1>
            <p>Sluice is a proxy on a developer's computer: it shows, checks and caches what apps receive.
            This page is served by Sluice itself, at <code>http://\(Onboarding.host)/</code> through the proxy.</p>
            <h2>1. Use the proxy</h2>
            <p id="proxy">\(proxyLine)\(credentialsLine)</p>
            <p>iOS: Settings › Wi-Fi › (i) › Configure Proxy › Manual. Android: Settings › Network › Wi-Fi › (edit) ›
            Advanced › Proxy › Manual; an emulator on this computer: <code>emulator -http-proxy http://127.0.0.1:\(port)</code>
            (on the computer), or <code>adb shell settings put global http_proxy 10.0.2.2:\(port)</code> (inside it,
            10.0.2.2 being the computer). Then open
            <code>http://\(Onboarding.host)/</code>.</p>
            \(certificateSection)
            <h2>3. Steps per platform</h2>
            <details open><summary>iOS and iPadOS</summary>
            <p>Open <a href="/sluice-ca.mobileconfig">the profile</a> in Safari, allow the download, then Settings ›
            Profile Downloaded › Install. Then turn on full trust: Settings › General › About › Certificate Trust
            Settings › enable "Sluice local CA". Remove it in Settings › General › VPN &amp; Device Management.</p></details>
            <details><summary>Android (apps)</summary>
            <p>Download <a href="/sluice-ca.crt">sluice-ca.crt</a>, then Settings › Security › More security settings ›
            Encryption &amp; credentials › Install a certificate › CA certificate. Since Android 7 apps trust user CAs
            only when they say so: for a debug build, add <code>res/xml/network_security_config.xml</code> with
            <code>&lt;debug-overrides&gt;&lt;trust-anchors&gt;&lt;certificates src="user"/&gt;&lt;/trust-anchors&gt;&lt;/debug-overrides&gt;</code>
            and <code>android:networkSecurityConfig="@xml/network_security_config"</code> in the manifest. Chrome on
            Android trusts user CAs.</p></details>
            <details><summary>Android emulators (system store)</summary>
            <p>For apps you cannot rebuild, put the CA in the system store of an emulator image without Google Play:
            name it by its old subject hash (<code>openssl x509 -subject_hash_old -noout -in sluice-ca.pem</code> gives
            HASH; copy it to <code>HASH.0</code>), start the emulator with <code>-writable-system</code>, then
            <code>adb root; adb remount; adb push HASH.0 /system/etc/security/cacerts/; adb shell chmod 644
            /system/etc/security/cacerts/HASH.0; adb reboot</code>. Android 14 and later read CAs from the Conscrypt APEX
            (<code>/apex/com.android.conscrypt/cacerts</code>): mount a tmpfs copy of that folder with HASH.0 added over it
            (in every app's mount namespace, after each boot), as HTTP Toolkit's and mitmproxy's guides describe.</p></details>
            <details><summary>macOS</summary>
            <p>Open <a href="/sluice-ca.mobileconfig">the profile</a>, then System Settings › Privacy &amp; Security ›
            Profiles › Install; or, in a terminal on the computer: <code>sudo security add-trusted-cert -d -r trustRoot -k
            /Library/Keychains/System.keychain sluice-ca.pem</code>. Chrome and Safari use the keychain.</p></details>
            <details><summary>Windows</summary>
            <p>Open <a href="/sluice-ca.crt">sluice-ca.crt</a> › Install Certificate › Local Machine › Place all certificates
            in: Trusted Root Certification Authorities; or <code>certutil -addstore -f Root sluice-ca.crt</code> as
            administrator. Chrome and Edge use this store.</p></details>
            <details><summary>Linux</summary>
            <p>On the computer that runs Sluice, <code>sluice trust install</code> does it (system store, Chromium's and
            Firefox's NSS databases, Java). Elsewhere: copy <a href="/sluice-ca.pem">sluice-ca.pem</a> to
            <code>/usr/local/share/ca-certificates/sluice-ca.crt</code> and run <code>sudo update-ca-certificates</code>;
            for Chromium, <code>certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n sluice -i sluice-ca.pem</code>.</p></details>
            <details><summary>Firefox (any system)</summary>
            <p>Firefox has its own store: Settings › Privacy &amp; Security › Certificates › View Certificates ›
            Authorities › Import <a href="/sluice-ca.pem">sluice-ca.pem</a>, and tick "Trust this CA to identify
            websites".</p></details>
            </body></html>

            """
    }
}

extension ProxyRequest {
    /// An origin-form `GET` of an onboarding path, sent to the proxy's own address by a browser
    /// that is not set up yet: answered without proxy credentials (nothing on it is secret).
    var asksForOnboarding: Bool {
        if case .origin(let path) = target { return Onboarding.resource(method: method, path: path) != nil }
        return false
    }
}
