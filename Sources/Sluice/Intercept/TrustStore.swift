import Foundation

/// The places that decide whether this machine trusts a CA, as `sluice trust` sees them: the
/// system store (Debian's `ca-certificates`, or an OpenSSL hash directory), NSS databases
/// (Chromium's, each Firefox profile's) and a Java `cacerts`. Where they are is decided from the
/// flags and the environment (a pure function); what is done to them is in ``TrustCommand``.
public enum TrustStore: Equatable, Sendable {
    /// Debian's local CA folder (`/usr/local/share/ca-certificates`): a `.crt` there, then
    /// `update-ca-certificates` links it into `/etc/ssl/certs`, its bundle and Java's store.
    case debian(folder: String)
    /// An OpenSSL hash directory (`-CApath`): the PEM and its `HASH.0` link.
    case hashDirectory(String)
    /// An NSS database (`sql:` format) and whose it is.
    case nss(directory: String, owner: String)
    /// A Java key store (`cacerts`, password `changeit`).
    case java(cacerts: String)

    public var kind: String {
        switch self {
        case .debian, .hashDirectory: "system store"
        case .nss: "NSS"
        case .java: "Java"
        }
    }

    public var place: String {
        switch self {
        case .debian(let folder): folder
        case .hashDirectory(let directory): directory
        case .nss(let directory, let owner): "\(directory) (\(owner))"
        case .java(let cacerts): cacerts
        }
    }

    /// Debian's folder for local CAs.
    public static let debianFolder = "/usr/local/share/ca-certificates"

    /// What the machine offers, as far as the stores are concerned.
    public struct Machine {
        public var home: String
        /// Whether a path exists (a file or a directory).
        public var exists: (String) -> Bool
        /// The entries of a directory (names), empty when it is none.
        public var entries: (String) -> [String]
        /// A program on PATH, resolved through symbolic links.
        public var program: (String) -> String?
        public var javaHome: String?

        public init(
            home: String, exists: @escaping (String) -> Bool, entries: @escaping (String) -> [String],
            program: @escaping (String) -> String?, javaHome: String?
        ) {
            self.home = home
            self.exists = exists
            self.entries = entries
            self.program = program
            self.javaHome = javaHome
        }
    }

    /// The stores to act on: the ones named by flags when any is given (nothing else is touched),
    /// else those this machine has.
    public static func locations(systemStore: String?, nssDatabases: [String], javaCacerts: String?, machine: Machine)
        -> [TrustStore]
    {
        if systemStore != nil || !nssDatabases.isEmpty || javaCacerts != nil {
            let system: [TrustStore] = systemStore.map { [.hashDirectory($0)] } ?? []
            let java: [TrustStore] = javaCacerts.map { [.java(cacerts: $0)] } ?? []
            return system + nssDatabases.map { .nss(directory: $0, owner: "--nss-db") } + java
        }
        var found: [TrustStore] = []
        if machine.program("update-ca-certificates") != nil || machine.exists("/usr/sbin/update-ca-certificates") {
            found.append(.debian(folder: debianFolder))
        }
        // Chromium and Chrome on Linux read ~/.pki/nssdb (made here when a browser is installed
        // and has not made it yet); the snap's has a folder of its own.
        let chromium = machine.home + "/.pki/nssdb"
        let browsers = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "brave-browser"]
        if machine.exists(chromium) || browsers.contains(where: { machine.program($0) != nil }) {
            found.append(.nss(directory: chromium, owner: "Chromium, Chrome"))
        }
        // The snap's and the Flatpaks' (Chromium, Chrome, Brave) have folders of their own.
        let sandboxed = [
            ("/snap/chromium/current/.pki/nssdb", "Chromium snap"),
            ("/.var/app/org.chromium.Chromium/.pki/nssdb", "Chromium Flatpak"),
            ("/.var/app/com.google.Chrome/.pki/nssdb", "Chrome Flatpak"),
            ("/.var/app/com.brave.Browser/.pki/nssdb", "Brave Flatpak"),
        ]
        for (place, owner) in sandboxed where machine.exists(machine.home + place) {
            found.append(.nss(directory: machine.home + place, owner: owner))
        }
        // Firefox's profiles: the classic folder, the XDG one of newer releases, the snap's and
        // the Flatpak's.
        let firefoxRoots = [
            "/.mozilla/firefox", "/.config/mozilla/firefox", "/snap/firefox/common/.mozilla/firefox",
            "/.var/app/org.mozilla.firefox/.mozilla/firefox",
        ].map { machine.home + $0 }
        for root in firefoxRoots {
            for profile in machine.entries(root).sorted() where machine.exists("\(root)/\(profile)/cert9.db") {
                found.append(.nss(directory: "\(root)/\(profile)", owner: "Firefox profile \(profile)"))
            }
        }
        if let cacerts = javaStore(machine) { found.append(.java(cacerts: cacerts)) }
        return found
    }

    /// The `cacerts` of the JDK in `JAVA_HOME`, else of the `java` on PATH.
    public static func javaStore(_ machine: Machine) -> String? {
        var homes: [String] = []
        if let home = machine.javaHome, !home.isEmpty { homes.append(home) }
        // …/bin/java → …
        if let java = machine.program("java") {
            homes.append(URL(fileURLWithPath: java).deletingLastPathComponent().deletingLastPathComponent().path)
        }
        for home in homes {
            for candidate in [home + "/lib/security/cacerts", home + "/jre/lib/security/cacerts"]
            where machine.exists(candidate) {
                return candidate
            }
        }
        return nil
    }

    /// The NSS nickname and Java alias of a CA: its name and the start of its fingerprint, so that
    /// two Sluice CAs (two machines, a new CA) never replace each other.
    public static func nickname(fingerprint: String) -> String {
        "Sluice local CA (\(fingerprint.filter(\.isHexDigit).prefix(8)))"
    }

    public static func alias(fingerprint: String) -> String {
        "sluice-" + fingerprint.filter(\.isHexDigit).prefix(8).lowercased()
    }

    /// Whether `certutil -L` lists the nickname as a CA trusted for TLS servers (`C` in the first
    /// of its three trust fields).
    public static func nssListsTrusted(_ listing: String, nickname: String) -> Bool {
        listing.split(separator: "\n").contains { line in
            guard line.hasPrefix(nickname) else { return false }
            let flags = line.dropFirst(nickname.count).trimmingCharacters(in: .whitespaces)
            let fields = flags.split(separator: ",", omittingEmptySubsequences: false)
            return fields.count == 3 && fields[0].contains("C")
        }
    }
}

extension TrustStore.Machine {
    /// This machine.
    public static func current() -> TrustStore.Machine {
        let environment = ProcessInfo.processInfo.environment
        let files = FileManager.default
        return TrustStore.Machine(
            home: environment["HOME"] ?? NSHomeDirectory(), exists: { files.fileExists(atPath: $0) },
            entries: { (try? files.contentsOfDirectory(atPath: $0)) ?? [] },
            program: { name in
                for directory in (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
                    let path = "\(directory)/\(name)"
                    if files.isExecutableFile(atPath: path) {
                        return URL(fileURLWithPath: path).resolvingSymlinksInPath().path
                    }
                }
                return nil
            }, javaHome: environment["JAVA_HOME"])
    }
}
