import ArgumentParser
import Foundation
import Sluice

/// `sluice trust install|uninstall|status`: Sluice's CA in the places that decide trust on this
/// machine, in one command (as `mkcert -install` does): the system store, every NSS database of
/// Chromium and Firefox, and a Java `cacerts`.
struct TrustCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "Trust Sluice's CA on this machine: system store, Chromium and Firefox (NSS), Java.",
        discussion: """
            install adds the CA of this configuration (made first when there is none) to Debian's \
            system store (/usr/local/share/ca-certificates, then update-ca-certificates; through \
            sudo when not root), to every NSS database (~/.pki/nssdb for Chromium and Chrome, \
            each Firefox profile; certutil from libnss3-tools), and to the cacerts of the JDK in \
            JAVA_HOME or on PATH (keytool). uninstall takes it out of the same places (with --all, every \
            other Sluice CA found there too: an earlier one, after a new CA); status says where it is \
            trusted, and names other Sluice CAs still trusted. install --dry-run and uninstall \
            --dry-run say what they would do in each store and change nothing. With --system-store DIR (an OpenSSL hash directory: the PEM and its \
            HASH.0 link), --nss-db DIR or --java-cacerts FILE, only the places named are touched. \
            Restart browsers afterwards. Elsewhere:
              macOS:   sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain CA.pem
              Windows: certutil -addstore -f Root CA.crt   (as administrator)
              phones:  the admin page's Devices tab, or http://sluice.internal/ through the proxy
            """,
        subcommands: [Install.self, Uninstall.self, Status.self])

    /// What every subcommand takes.
    struct Places: ParsableArguments {
        @OptionGroup var options: ConfigOptions
        @Option(name: .customLong("system-store"), help: "An OpenSSL hash directory to use as the system store.")
        var systemStore: String?
        @Option(name: .customLong("nss-db"), help: "An NSS database directory (repeatable); made when missing.")
        var nssDatabases: [String] = []
        @Option(name: .customLong("java-cacerts"), help: "A Java key store (password changeit).")
        var javaCacerts: String?

        var stores: [TrustStore] {
            TrustStore.locations(
                systemStore: systemStore.map(absolute), nssDatabases: nssDatabases.map(absolute),
                javaCacerts: javaCacerts.map(absolute), machine: .current())
        }

        private func absolute(_ path: String) -> String {
            path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        }

        /// Under `sudo`, `HOME` is root's: its data directory (another CA) and its browser
        /// profiles, not the user's. The command asks sudo itself for the system store.
        func refuseUnderSudo() throws {
            let environment = ProcessInfo.processInfo.environment
            guard geteuid() == 0, let user = environment["SUDO_USER"], !user.isEmpty, user != "root" else { return }
            let explicit = systemStore != nil || !nssDatabases.isEmpty || javaCacerts != nil
            if explicit, options.file != nil { return }
            throw CommandFailure.failed(
                "run sluice trust as \(user), without sudo: it asks sudo itself for the system store; under sudo it would use root's data directory (another CA) and root's browser profiles (or name them: --config FILE with --system-store, --nss-db, --java-cacerts)"
            )
        }

        /// The CA of this configuration and the actions on it (after the sudo check); `prepare`
        /// runs before the CA is read (install makes one when there is none, in a data
        /// directory made for it).
        /// `withoutCA`: the CA may be gone (its files removed); the other Sluice CAs in the stores
        /// are still found by name (`uninstall --all`, `status`), and `nil` stands for it.
        func actions(prepare: ((Configuration.TLS) throws -> Void)? = nil, withoutCA: Bool = false) throws -> (
            TrustActions, CertificateInfo?
        ) {
            try refuseUnderSudo()
            // A key store that is not there is a mistyped path (keytool would make a new one that
            // nothing reads), not one to create.
            if let javaCacerts, !FileManager.default.fileExists(atPath: absolute(javaCacerts)) {
                throw CommandFailure.noInput(
                    "no Java key store at \(javaCacerts): name the JDK's (e.g. $JAVA_HOME/lib/security/cacerts)")
            }
            let settings = try options.load(creatingDataDirectory: prepare != nil).0.tls
            try prepare?(settings)
            if withoutCA, !FileManager.default.fileExists(atPath: settings.caCert) {
                return (TrustActions(ca: try LocalCA.stranger(), pemFile: settings.caCert), nil)
            }
            let ca = try CACommand.certificate(settings, options: options)
            return (TrustActions(ca: ca, pemFile: settings.caCert), ca)
        }

        /// The actions on the CA as it is (none made), the stores found (none: a failure), the CA
        /// said first, or `noCA` when there is none yet.
        func storesAndCA(saying noCA: String) throws -> (TrustActions, CertificateInfo?, [TrustStore]) {
            let (trust, ca) = try actions(withoutCA: true)
            let stores = self.stores
            guard !stores.isEmpty else { throw CommandFailure.failed(TrustActions.nothingFound) }
            print(ca.map { "CA: \($0.subject), SHA-256 \($0.sha256Fingerprint)" } ?? noCA)
            return (trust, ca, stores)
        }

        /// The flags that name the places, to repeat in the undo line.
        var flags: String {
            (options.file.map { " --config \($0)" } ?? "") + (systemStore.map { " --system-store \($0)" } ?? "")
                + nssDatabases.map { " --nss-db \($0)" }.joined() + (javaCacerts.map { " --java-cacerts \($0)" } ?? "")
        }
    }

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add the CA to the trust stores.")
        @OptionGroup var places: Places
        @Flag(name: .customLong("dry-run"), help: "Say what would be done in each store; change nothing.")
        var dryRun = false

        func run() throws {
            if dryRun { return try plan() }
            let (trust, ca) = try places.actions { settings in
                guard !LocalCA.exists(settings) else { return }
                do {
                    try LocalCA.create(settings, now: Date().timeIntervalSince1970)
                    print("created the CA \(settings.caCert) (its key \(settings.caKey), mode 0600)")
                } catch {
                    throw CommandFailure.failed("\(error)")
                }
            }
            let stores = places.stores
            guard !stores.isEmpty else { throw CommandFailure.failed(TrustActions.nothingFound) }
            if let ca { print("CA: \(ca.subject), SHA-256 \(ca.sha256Fingerprint)") }
            var failed = false
            for store in stores {
                let outcome = trust.install(store)
                if case .failed = outcome { failed = true }
                print(TrustActions.line(store, outcome))
            }
            print("undo: sluice trust uninstall\(places.flags); restart browsers to see the change")
            if failed { throw CommandFailure.failed("the CA could not be added everywhere (see above)") }
        }

        /// `--dry-run`: no CA is made (that it would be is said), nothing is written.
        private func plan() throws {
            let (trust, ca, stores) = try places.storesAndCA(
                saying: "would create the CA \(try places.options.load().0.tls.caCert) first (none there yet)")
            for store in stores { print(TrustActions.line(store, trust.installPlan(store, caExists: ca != nil))) }
            print("dry run: nothing was changed; sluice trust install\(places.flags) does it")
        }
    }

    struct Uninstall: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take the CA out of the trust stores.")
        @OptionGroup var places: Places
        @Flag(
            name: .customLong("all"),
            help:
                "Also every other Sluice CA trusted there (an earlier CA after `sluice ca init`, another configuration's)."
        )
        var all = false
        @Flag(name: .customLong("dry-run"), help: "Say what would be removed from each store; change nothing.")
        var dryRun = false

        func run() throws {
            // With --all, a CA whose files are gone can still be taken out (as another's).
            let (trust, ca) = try places.actions(withoutCA: all)
            if ca == nil { print("no CA at this configuration's path any more: every Sluice CA found is removed") }
            var failed = false
            var left: [String] = []
            for store in places.stores {
                let outcome = dryRun ? trust.uninstallPlan(store, all: all) : trust.uninstall(store, all: all)
                if case .failed = outcome { failed = true }
                print(TrustActions.line(store, outcome))
                if !all { left += trust.others(store) }
            }
            if !left.isEmpty {
                print(
                    "other Sluice CAs are still trusted (\(left.joined(separator: ", "))): sluice trust uninstall --all\(places.flags) removes them too"
                )
            }
            if dryRun { print("dry run: nothing was changed") }
            if failed { throw CommandFailure.failed("the CA could not be removed everywhere (see above)") }
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Where the CA is trusted (exit status 1 when somewhere it is not).")
        @OptionGroup var places: Places

        func run() throws {
            let (trust, ca, stores) = try places.storesAndCA(
                saying: "CA: none at this configuration's path (sluice ca init makes one)")
            var missing = 0
            for store in stores {
                let outcome = ca == nil ? .notTrusted("no CA") : trust.status(store)
                if outcome != .trusted { missing += 1 }
                print(TrustActions.line(store, outcome))
                let others = trust.others(store)
                if !others.isEmpty {
                    print(
                        "  also trusted there, other Sluice CAs: \(others.joined(separator: ", ")) (sluice trust uninstall --all removes them)"
                    )
                }
            }
            if missing > 0 { throw ExitCode(1) }
        }
    }
}
