import TLS

@_exported import struct TLS.CertificateInfo

#if canImport(Glibc)
    import Glibc
#endif

/// The local CA on disk: `tls.ca_cert` (PEM, world-readable: it is what users trust) and
/// `tls.ca_key` (PEM, created 0600). Like ssh with its keys, a key file that the group or others
/// can read is refused. The key's text is never logged, served or exported.
public enum LocalCA {
    /// Why the CA cannot be used.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Whether both files exist.
    public static func exists(_ settings: Configuration.TLS) -> Bool {
        access(settings.caCert, F_OK) == 0 && access(settings.caKey, F_OK) == 0
    }

    /// Creates a new CA (ECDSA P-256, CA:TRUE pathlen 0, 10 years) and writes both files;
    /// refuses to overwrite existing ones.
    @discardableResult
    public static func create(_ settings: Configuration.TLS, now: Double) throws(Failure) -> CertificateAuthority {
        for path in [settings.caCert, settings.caKey] where access(path, F_OK) == 0 {
            throw Failure(description: "\(path) exists already; remove both CA files first to make a new CA")
        }
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count)
        let machine = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let day = HTTPDate.isoDay(Int64(now))
        // The minute too: two CAs made on one machine and day (a new one after `ca init`) are
        // told apart in a phone's or a browser's list, which shows the name.
        let seconds = Int64(now) % 86_400
        func twoDigits(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let minute = twoDigits(seconds / 3600) + ":" + twoDigits(seconds / 60 % 60)
        let authority: CertificateAuthority
        do {
            authority = try CertificateAuthority.create(
                commonName: "Sluice local CA (\(machine.isEmpty ? "this machine" : machine), \(day) \(minute) UTC)",
                organization: "Sluice", validDays: 3650)
        } catch {
            throw Failure(description: "cannot create the CA: \(error)")
        }
        try write(authority.keyPEM, to: settings.caKey, mode: 0o600)
        try write(authority.certificatePEM, to: settings.caCert, mode: 0o644)
        return authority
    }

    /// Loads the CA; the key file must not be readable by the group or others.
    public static func load(_ settings: Configuration.TLS) throws(Failure) -> CertificateAuthority {
        guard let mode = KeyFile.mode(settings.caKey) else {
            throw Failure(description: "no CA key at \(settings.caKey) (run `sluice ca init`)")
        }
        if mode & 0o077 != 0 {
            throw Failure(
                description:
                    "the CA key \(settings.caKey) is readable by others (mode \(String(mode, radix: 8))); run `chmod 600 \(settings.caKey)`"
            )
        }
        let certificate = try read(settings.caCert)
        let key = try read(settings.caKey)
        do {
            return try CertificateAuthority.load(certificatePEM: certificate, keyPEM: key)
        } catch {
            throw Failure(
                description: "cannot use the CA in \(settings.caCert) / \(settings.caKey): \(error.operation)")
        }
    }

    /// A certificate no store holds, made in memory and thrown away: what `sluice trust
    /// uninstall --all` and `status` stand on when this configuration's CA is gone (every Sluice
    /// CA in the stores is then another's).
    public static func stranger() throws(Failure) -> CertificateInfo {
        do {
            return try CertificateAuthority.create(commonName: "Sluice (none)", organization: "Sluice", validDays: 1)
                .info
        } catch {
            throw Failure(description: "cannot make a certificate: \(error)")
        }
    }

    /// What the CA certificate says (no key needed).
    public static func certificate(_ settings: Configuration.TLS) throws(Failure) -> CertificateInfo {
        let text = try read(settings.caCert)
        do {
            return try CertificateInfo(pem: text)
        } catch {
            throw Failure(description: "\(settings.caCert) holds no certificate: \(error.operation)")
        }
    }

    /// How to make clients trust the CA, one platform a paragraph (`sluice ca export` prints it on stderr).
    /// - Parameter proxy: the proxy's `host:port` as clients reach it (its listen address).
    /// - Parameter config: the `--config` the command was given, repeated in the commands it names.
    public static func trustInstructions(
        certificatePath path: String, proxy: String = "127.0.0.1:8080", config: String? = nil
    ) -> String {
        let flag = config.map { " --config \($0)" } ?? ""
        return
            """
            Trust this CA where your clients run (the certificate only; the key never leaves this machine).
            On this machine, one command does the system store, Chromium's and Firefox's NSS databases and Java:
              sluice trust install\(flag)        (sluice trust uninstall\(flag) undoes it)
            Phones and emulators: the admin page's Devices tab, or http://sluice.internal/ through the proxy.
            By hand:
              Debian/Ubuntu:  sudo cp \(path) /usr/local/share/ca-certificates/sluice-ca.crt && sudo update-ca-certificates
              macOS:          sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain \(path)
              iOS Simulator:  xcrun simctl keychain booted add-root-cert \(path)
              Android:        install it as a user CA (Settings > Security > Encryption & credentials), and let a
                              debug build of the app trust user CAs: <network-security-config><debug-overrides>
                              <trust-anchors><certificates src="user"/></trust-anchors></debug-overrides>
                              </network-security-config> (release builds keep trusting the system's CAs only)
              Firefox:        Settings > Privacy & Security > Certificates > View Certificates > Authorities > Import
              Chromium/Chrome on Linux (NSS, libnss3-tools):
                              certutil -d sql:$HOME/.pki/nssdb -A -t "C,," -n sluice -i \(path)
                              and, for origins on loopback, --proxy-bypass-list="<-loopback>"
              Chrome on macOS: the macOS line above (the system keychain)
              Java:           keytool -importcert -cacerts -alias sluice -file \(path)
              Per runtime:    eval "$(sluice env\(flag))" points SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE and more
                              at a bundle of the system's CAs and this one (this file alone would fail every
                              host not intercepted); NODE_EXTRA_CA_CERTS=\(path) adds it for Node
            Then: export https_proxy=http://\(proxy) (or eval "$(sluice env\(flag))") and list the hosts under tls.intercept.
            """
    }

    // MARK: - Files

    private static func write(_ text: String, to path: String, mode: mode_t) throws(Failure) {
        if let slash = path.lastIndex(of: "/") {
            let directory = String(path[..<slash])
            if !directory.isEmpty { mkdir(directory, 0o755) }
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode)
        guard fd >= 0 else { throw Failure(description: "cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        fchmod(fd, mode)  // whatever the umask
        var text = text
        let written = text.withUTF8 { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == text.utf8.count else { throw Failure(description: "cannot write \(path)") }
    }

    private static func read(_ path: String) throws(Failure) -> String {
        guard let file = fopen(path, "r") else {
            throw Failure(description: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
