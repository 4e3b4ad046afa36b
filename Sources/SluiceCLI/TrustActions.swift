import Foundation
import Sluice

/// What `sluice trust` does to each store, with the tools each one is managed by
/// (`update-ca-certificates`, `certutil`, `keytool`); root's work through `sudo` when not root.
struct TrustActions {
    let ca: CertificateInfo
    /// The CA's PEM file (what the tools import).
    let pemFile: String

    enum Outcome: Equatable {
        case trusted
        case notTrusted(String)
        case added(String)
        case alreadyThere
        case removed
        case wasNotThere
        case failed(String)
        /// `--dry-run`: what would be done.
        case wouldChange(String)
    }

    static let nothingFound =
        "found no trust store on this machine (no update-ca-certificates, browser profile or JDK); name one with --system-store DIR, --nss-db DIR or --java-cacerts FILE"

    static func line(_ store: TrustStore, _ outcome: Outcome) -> String {
        let text: String
        switch outcome {
        case .trusted: text = "trusted"
        case .notTrusted(let why): text = "NOT trusted" + (why.isEmpty ? "" : " (\(why))")
        case .added(let how): text = "added" + (how.isEmpty ? "" : " (\(how))")
        case .alreadyThere: text = "already trusted, unchanged"
        case .removed: text = "removed"
        case .wasNotThere: text = "not there, unchanged"
        case .failed(let why): text = "FAILED: \(why)"
        case .wouldChange(let what): text = "would " + what
        }
        return store.kind.padding(toLength: 14, withPad: " ", startingAt: 0) + store.place + ": " + text
    }

    var nickname: String { TrustStore.nickname(fingerprint: ca.sha256Fingerprint) }
    var alias: String { TrustStore.alias(fingerprint: ca.sha256Fingerprint) }
    var fileName: String { "sluice-ca-\(ca.sha256Fingerprint.filter(\.isHexDigit).prefix(8).lowercased())" }

    // MARK: - Status

    func status(_ store: TrustStore) -> Outcome {
        switch store {
        case .debian:
            let bundle = (try? String(contentsOfFile: "/etc/ssl/certs/ca-certificates.crt", encoding: .utf8)) ?? ""
            return bundle.contains(pemBody) ? .trusted : .notTrusted("not in /etc/ssl/certs/ca-certificates.crt")
        case .hashDirectory(let directory):
            return hashLinks(in: directory).isEmpty ? .notTrusted("no \(ca.subjectHash).N link to it") : .trusted
        case .nss(let directory, _):
            guard FileManager.default.fileExists(atPath: directory + "/cert9.db") else {
                return .notTrusted("no NSS database there")
            }
            guard let certutil = tool("certutil") else { return .notTrusted(TrustActions.noCertutil) }
            let listing = run([certutil, "-L", "-d", "sql:" + directory])
            return TrustStore.nssListsTrusted(listing.output, nickname: nickname) ? .trusted : .notTrusted("")
        case .java(let cacerts):
            guard let keytool = keytool(for: cacerts) else { return .notTrusted("no keytool") }
            let listed = javaAliases(keytool, cacerts)
            return listed.contains(alias) || listed.contains(debianJavaAlias) ? .trusted : .notTrusted("")
        }
    }

    /// Other Sluice CAs (an earlier CA of this configuration, another configuration's) trusted
    /// in `store`, by the names Sluice gives them: what `uninstall --all` also takes out.
    func others(_ store: TrustStore) -> [String] {
        switch store {
        case .debian(let folder):
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return names.filter { Self.isSluiceName($0, "sluice-ca-", ".crt") && $0 != "\(fileName).crt" }.sorted()
        case .hashDirectory(let directory):
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return names.filter { Self.isSluiceName($0, "sluice-ca-", ".pem") && $0 != "\(fileName).pem" }.sorted()
        case .nss(let directory, _):
            guard FileManager.default.fileExists(atPath: directory + "/cert9.db"), let certutil = tool("certutil")
            else { return [] }
            let listing = run([certutil, "-L", "-d", "sql:" + directory]).output
            return Set(
                listing.split(separator: "\n").compactMap { line -> String? in
                    guard line.hasPrefix("Sluice local CA ("), let close = line.firstIndex(of: ")") else { return nil }
                    let name = String(line[...close])
                    return name == nickname || !Self.isSluiceName(name, "Sluice local CA (", ")") ? nil : name
                }
            ).sorted()
        case .java(let cacerts):
            guard let keytool = keytool(for: cacerts) else { return [] }
            return javaAliases(keytool, cacerts).filter {
                (Self.isSluiceName($0, "sluice-", "") || Self.isSluiceName($0, "debian:sluice-ca-", ".pem"))
                    && $0 != alias && $0 != debianJavaAlias
            }.sorted()
        }
    }

    // MARK: - Install

    func install(_ store: TrustStore) -> Outcome {
        if status(store) == .trusted { return .alreadyThere }
        switch store {
        case .debian(let folder):
            let target = "\(folder)/\(fileName).crt"
            let copied = run(["install", "-D", "-m", "0644", pemFile, target], asRoot: true)
            guard copied.status == 0 else { return .failed("cannot write \(target): \(copied.output)") }
            let updated = run([updateCACertificates], asRoot: true)
            guard updated.status == 0 else { return .failed("update-ca-certificates: \(updated.output)") }
            return .added("\(target); update-ca-certificates ran")
        case .hashDirectory(let directory):
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                let file = "\(directory)/\(fileName).pem"
                try ca.pem.write(toFile: file, atomically: true, encoding: .utf8)
                // The first free HASH.N (another CA may have the same subject hash).
                for index in 0..<16 {
                    let link = "\(directory)/\(ca.subjectHash).\(index)"
                    if (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) != nil
                        || FileManager.default.fileExists(atPath: link)
                    {
                        continue
                    }
                    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "\(fileName).pem")
                    return .added("\(fileName).pem, linked as \(ca.subjectHash).\(index)")
                }
                return .failed("every \(ca.subjectHash).N link is taken")
            } catch {
                return .failed("\(error.localizedDescription)")
            }
        case .nss(let directory, _):
            guard let certutil = tool("certutil") else { return .failed(TrustActions.noCertutil) }
            var how = "as \"\(nickname)\""
            if !FileManager.default.fileExists(atPath: directory + "/cert9.db") {
                try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                let made = run([certutil, "-N", "-d", "sql:" + directory, "--empty-password"])
                guard made.status == 0 else { return .failed("cannot make an NSS database: \(made.output)") }
                how += "; the database was made"
            }
            let added = run([certutil, "-A", "-d", "sql:" + directory, "-t", "C,,", "-n", nickname, "-i", pemFile])
            return added.status == 0 ? .added(how) : .failed("certutil: \(added.output)")
        case .java(let cacerts):
            guard let keytool = keytool(for: cacerts) else { return .failed("no keytool beside \(cacerts) or on PATH") }
            let imported = run(
                [keytool] + javaStore(cacerts) + ["-importcert", "-noprompt", "-alias", alias, "-file", pemFile],
                asRoot: !FileManager.default.isWritableFile(atPath: cacerts))
            return imported.status == 0 ? .added("alias \(alias)") : .failed("keytool: \(imported.output)")
        }
    }

    // MARK: - Uninstall

    /// Takes this CA out of `store`; with `all`, every other Sluice CA there too (``others(_:)``).
    func uninstall(_ store: TrustStore, all: Bool = false) -> Outcome {
        let entries: [String]
        switch removable(store, all: all) {
        case .failure(let failure): return .failed(failure.why)
        case .success(let found): entries = found
        }
        guard !entries.isEmpty else { return .wasNotThere }
        switch store {
        case .debian:
            let removed = run(["rm", "-f"] + entries, asRoot: true)
            guard removed.status == 0 else { return .failed("cannot remove \(entries[0]): \(removed.output)") }
            let updated = run([updateCACertificates, "--fresh"], asRoot: true)
            return updated.status == 0 ? .removed : .failed("update-ca-certificates: \(updated.output)")
        case .hashDirectory:
            for path in entries {
                do {
                    try FileManager.default.removeItem(atPath: path)
                } catch {
                    return .failed("cannot remove \(path): \(error.localizedDescription)")
                }
            }
            return .removed
        case .nss(let directory, _):
            guard let certutil = tool("certutil") else { return .failed(TrustActions.noCertutil) }
            // A nickname can be there more than once (the same CA added twice).
            for name in entries {
                var times = 0
                var deleted = run([certutil, "-D", "-d", "sql:" + directory, "-n", name])
                while deleted.status == 0, times < 8 {
                    times += 1
                    deleted = run([certutil, "-D", "-d", "sql:" + directory, "-n", name])
                }
                if times == 0 { return .failed("certutil could not delete \"\(name)\": \(deleted.output)") }
            }
            return .removed
        case .java(let cacerts):
            guard let keytool = keytool(for: cacerts) else { return .failed("no keytool") }
            for name in entries {
                let deleted = run(
                    [keytool] + javaStore(cacerts) + ["-delete", "-alias", name],
                    asRoot: !FileManager.default.isWritableFile(atPath: cacerts))
                guard deleted.status == 0 else { return .failed("keytool: \(deleted.output)") }
            }
            return .removed
        }
    }

    struct Failure: Error {
        let why: String
    }

    /// What ``uninstall(_:all:)`` takes out of `store`, as it is now: files and links of the
    /// system store, NSS nicknames, Java aliases (none: it is not there).
    func removable(_ store: TrustStore, all: Bool) -> Result<[String], Failure> {
        let others = all ? self.others(store) : []
        switch store {
        case .debian(let folder):
            return .success(
                (["\(fileName).crt"] + others).map { "\(folder)/\($0)" }.filter {
                    FileManager.default.fileExists(atPath: $0)
                })
        case .hashDirectory(let directory):
            let links = hashLinks(in: directory) + linksPointing(in: directory, to: Set(others))
            let files = (["\(fileName).pem"] + others).map { "\(directory)/\($0)" }.filter {
                FileManager.default.fileExists(atPath: $0)
            }
            return .success(links + files)
        case .nss(let directory, _):
            guard FileManager.default.fileExists(atPath: directory + "/cert9.db") else { return .success([]) }
            guard let certutil = tool("certutil") else { return .failure(Failure(why: TrustActions.noCertutil)) }
            let listed = run([certutil, "-L", "-d", "sql:" + directory])
            guard listed.status == 0 else {
                return .failure(Failure(why: "certutil could not list \(directory): \(listed.output)"))
            }
            let listing = listed.output.split(separator: "\n")
            return .success(([nickname] + others).filter { name in listing.contains { $0.hasPrefix(name + " ") } })
        case .java(let cacerts):
            guard let keytool = keytool(for: cacerts) else { return .failure(Failure(why: "no keytool")) }
            // Sluice's own alias, and the one Debian's ca-certificates-java gives the system
            // store's copy (`debian:sluice-ca-….pem`), which outlives the copy's removal.
            let listed = javaAliases(keytool, cacerts)
            return .success(([alias, debianJavaAlias] + others).filter { listed.contains($0) })
        }
    }

    // MARK: - Helpers

    static let noCertutil = "certutil not found: sudo apt-get install libnss3-tools"

    /// The certificate's base64 lines, as a bundle holds them.
    private var pemBody: String {
        ca.pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined(separator: "\n")
    }

    /// The `HASH.N` entries of a directory that hold this CA.
    private func hashLinks(in directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix(ca.subjectHash + ".") }.map { "\(directory)/\($0)" }.filter { path in
            guard let text = try? String(contentsOfFile: path, encoding: .utf8),
                let info = try? CertificateInfo(pem: text)
            else { return false }
            return info.sha256Fingerprint == ca.sha256Fingerprint
        }
    }

    /// Whether `name` is one Sluice gives a CA: `prefix`, the first 8 hex digits of its
    /// fingerprint, `suffix` (never a name of the person's own, `sluice-prod` say).
    static func isSluiceName(_ name: String, _ prefix: String, _ suffix: String) -> Bool {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count == prefix.count + 8 + suffix.count else {
            return false
        }
        return name.dropFirst(prefix.count).prefix(8).allSatisfy(\.isHexDigit)
    }

    /// The `HASH.N` links of a directory that point at one of `files`.
    private func linksPointing(in directory: String, to files: Set<String>) -> [String] {
        guard !files.isEmpty else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(name)")).map {
                files.contains(($0 as NSString).lastPathComponent)
            } ?? false
        }.map { "\(directory)/\($0)" }
    }

    /// The alias Debian's ca-certificates-java gives this CA's system-store copy.
    private var debianJavaAlias: String { "debian:\(fileName).pem" }

    /// Every alias of a Java key store (`keytool -list`: `alias, date, entry type,` lines).
    private func javaAliases(_ keytool: String, _ cacerts: String) -> Set<String> {
        let listing = run([keytool] + javaStore(cacerts) + ["-list"])
        guard listing.status == 0 else { return [] }
        return Set(
            listing.output.split(separator: "\n").compactMap { line -> String? in
                guard line.contains("Entry,") else { return nil }  // not a fingerprint line
                return line.components(separatedBy: ", ").first
            })
    }

    private var updateCACertificates: String {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/update-ca-certificates")
            ? "/usr/sbin/update-ca-certificates" : "update-ca-certificates"
    }

    func tool(_ name: String) -> String? { TrustStore.Machine.current().program(name) }

    /// The JDK's own keytool (beside its `lib/security/cacerts`), else the one on PATH.
    func keytool(for cacerts: String) -> String? {
        let home = URL(fileURLWithPath: cacerts).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let own = home.appendingPathComponent("bin/keytool").path
        return FileManager.default.isExecutableFile(atPath: own) ? own : tool("keytool")
    }

    private func javaStore(_ cacerts: String) -> [String] { ["-keystore", cacerts, "-storepass", "changeit"] }

    /// Runs a program (through `sudo` when `asRoot` and this is not root); its status and output.
    func run(_ arguments: [String], asRoot: Bool = false) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = (asRoot && geteuid() != 0 ? ["sudo"] : []) + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do {
            try process.run()
        } catch {
            return (127, "cannot run \(arguments[0]): \(error.localizedDescription)")
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return (process.terminationStatus, text)
    }
}
