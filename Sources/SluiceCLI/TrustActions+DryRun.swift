import Foundation
import Sluice

/// `sluice trust install|uninstall --dry-run`: what each store would get, nothing changed (no
/// CA made, no file written, no tool that writes run, no sudo asked).
extension TrustActions {
    /// What ``install(_:)`` would do to `store`. `caExists`: without a CA yet (install would make
    /// one), nothing can be trusted and the names it would get are not known.
    func installPlan(_ store: TrustStore, caExists: Bool) -> Outcome {
        if caExists, status(store) == .trusted { return .alreadyThere }
        let sudo = geteuid() == 0 ? "" : " (through sudo)"
        switch store {
        case .debian(let folder):
            let file = caExists ? "\(folder)/\(fileName).crt" : folder
            return .wouldChange("copy the CA to \(file), then run update-ca-certificates\(sudo)")
        case .hashDirectory(let directory):
            let file = caExists ? "\(directory)/\(fileName).pem" : "its PEM in \(directory)"
            return .wouldChange("write \(file) and link \(caExists ? ca.subjectHash : "its subject hash").N to it")
        case .nss(let directory, _):
            guard tool("certutil") != nil else { return .failed(TrustActions.noCertutil) }
            let made =
                FileManager.default.fileExists(atPath: directory + "/cert9.db") ? "" : "; make the database first"
            return .wouldChange("add the CA with certutil\(caExists ? " as \"\(nickname)\"" : "")\(made)")
        case .java(let cacerts):
            guard keytool(for: cacerts) != nil else { return .failed("no keytool beside \(cacerts) or on PATH") }
            let root = FileManager.default.isWritableFile(atPath: cacerts) ? "" : sudo
            return .wouldChange("import the CA with keytool\(caExists ? " as alias \(alias)" : "")\(root)")
        }
    }

    /// What ``uninstall(_:all:)`` would take out of `store`.
    func uninstallPlan(_ store: TrustStore, all: Bool) -> Outcome {
        let entries: [String]
        switch removable(store, all: all) {
        case .failure(let failure): return .failed(failure.why)
        case .success(let found): entries = found
        }
        guard !entries.isEmpty else { return .wasNotThere }
        let listed = entries.joined(separator: ", ")
        switch store {
        case .debian:
            let sudo = geteuid() == 0 ? "" : " (through sudo)"
            return .wouldChange("remove \(listed), then run update-ca-certificates --fresh\(sudo)")
        case .hashDirectory: return .wouldChange("remove \(listed)")
        case .nss: return .wouldChange("delete \(listed) with certutil")
        case .java: return .wouldChange("delete the alias\(entries.count == 1 ? "" : "es") \(listed) with keytool")
        }
    }
}
