import Foundation
import SluiceTestKit
import Testing

/// `sluice trust` against places of the test's own (never this machine's stores): an OpenSSL
/// hash directory, an NSS database (certutil, when libnss3-tools is installed) and a Java key store.
@Suite("sluice trust")
struct TrustCommandTests {
    private func tool(_ name: String) -> String? {
        ["/usr/bin", "/bin", "/usr/sbin"].map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    private func shell(_ command: String) throws -> (status: Int32, output: String) {
        try runProgram("/bin/sh", ["-c", command])
    }

    /// A scratch folder with a configuration that intercepts (its CA beside it, made on demand),
    /// and the places `sluice trust` is pointed at there: a hash directory and, when certutil is
    /// installed, an NSS database.
    private struct Scratch {
        let directory: URL
        let config: String
        let store: String
        let nss: String
        let hasCertutil: Bool
        var places: [String] {
            ["--config", config, "--system-store", store] + (hasCertutil ? ["--nss-db", nss] : [])
        }

        init(tool: (String) -> String?) throws {
            directory = try CLI.workingDirectory()
            config = directory.appendingPathComponent("sluice.yaml").path
            try "tls: { intercept: [localhost], ca_cert: ca.pem, ca_key: ca.key }\n".write(
                toFile: config, atomically: true, encoding: .utf8)
            store = directory.appendingPathComponent("store").path
            nss = directory.appendingPathComponent("nssdb").path
            hasCertutil = tool("certutil") != nil
        }
    }

    @Test(
        "install makes the CA, puts it in a hash directory with its HASH.0 link (openssl verify finds it) and an NSS database; status and uninstall agree"
    )
    func installStatusUninstall() throws {
        let scratch = try Scratch(tool: tool)
        defer { try? FileManager.default.removeItem(at: scratch.directory) }
        let (directory, store, nss, hasCertutil, places) = (
            scratch.directory, scratch.store, scratch.nss, scratch.hasCertutil, scratch.places
        )
        if !hasCertutil { print("skipped the NSS part: certutil (libnss3-tools) is not installed") }
        let before = try CLI.run(["trust", "status"] + places)
        #expect(before.status == 1 && before.output.contains("CA: none"), "no CA yet: \(before.output)")
        // A dry run says what install would do, and makes nothing: no CA, no store.
        let dry = try CLI.run(["trust", "install", "--dry-run"] + places)
        #expect(dry.status == 0 && dry.output.contains("would create the CA \(directory.path)/ca.pem"), "\(dry.output)")
        #expect(dry.output.contains("would write its PEM in \(store)") && dry.output.contains("dry run: nothing"))
        if hasCertutil { #expect(dry.output.contains("would add the CA with certutil; make the database first")) }
        #expect(!FileManager.default.fileExists(atPath: "\(directory.path)/ca.pem"))
        #expect(!FileManager.default.fileExists(atPath: store) && !FileManager.default.fileExists(atPath: nss))
        let install = try CLI.run(["trust", "install"] + places)
        #expect(install.status == 0, "\(install.output)")
        #expect(install.output.contains("created the CA"))
        #expect(install.output.contains("undo: sluice trust uninstall --config"))
        // The hash link is the one OpenSSL computes, and OpenSSL finds the CA through it
        let hash = try shell("openssl x509 -hash -noout -in \(directory.path)/ca.pem").output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: "\(store)/\(hash).0")
        #expect(link.hasPrefix("sluice-ca-") && link.hasSuffix(".pem"))
        let verify = try shell("openssl verify -CApath \(store) \(directory.path)/ca.pem")
        #expect(verify.status == 0, "\(verify.output)")
        if hasCertutil {
            let listing = try shell("certutil -L -d sql:\(nss)").output
            #expect(listing.contains("Sluice local CA ("), "\(listing)")
        }
        let status = try CLI.run(["trust", "status"] + places)
        #expect(status.status == 0, "\(status.output)")
        #expect(!status.output.contains("NOT trusted"))
        let again = try CLI.run(["trust", "install"] + places)
        #expect(again.output.contains("already trusted, unchanged"))
        let dryAgain = try CLI.run(["trust", "install", "--dry-run"] + places)
        #expect(
            dryAgain.output.contains("already trusted, unchanged") && !dryAgain.output.contains("would"),
            "\(dryAgain.output)")
        // A dry run of uninstall names what it would take out, and leaves it.
        let dryUninstall = try CLI.run(["trust", "uninstall", "--dry-run"] + places)
        #expect(
            dryUninstall.status == 0
                && dryUninstall.output.contains("would remove \(store)/\(hash).0, \(store)/\(link)"),
            "\(dryUninstall.output)")
        if hasCertutil { #expect(dryUninstall.output.contains("would delete Sluice local CA (")) }
        #expect(FileManager.default.fileExists(atPath: "\(store)/\(hash).0"))
        #expect(try CLI.run(["trust", "status"] + places).status == 0)
        // uninstall takes it out of both; status then says so and exits 1
        let uninstall = try CLI.run(["trust", "uninstall"] + places)
        #expect(uninstall.status == 0, "\(uninstall.output)")
        #expect(!FileManager.default.fileExists(atPath: "\(store)/\(hash).0"))
        let after = try CLI.run(["trust", "status"] + places)
        #expect(after.status == 1)
        #expect(after.output.contains("NOT trusted"))
        if hasCertutil { #expect(!(try shell("certutil -L -d sql:\(nss)").output.contains("Sluice local CA"))) }
        // Trusted, then its files gone: uninstall --all still takes it out of every store.
        #expect(try CLI.run(["trust", "install"] + places).status == 0)
        try FileManager.default.removeItem(atPath: "\(directory.path)/ca.pem")
        try FileManager.default.removeItem(atPath: "\(directory.path)/ca.key")
        let orphaned = try CLI.run(["trust", "uninstall", "--all"] + places)
        #expect(orphaned.status == 0 && orphaned.output.contains("removed"), "\(orphaned.output)")
        #expect(!FileManager.default.fileExists(atPath: "\(store)/\(hash).0"))
        if hasCertutil { #expect(!(try shell("certutil -L -d sql:\(nss)").output.contains("Sluice local CA"))) }
    }

    @Test("A Java key store gets the CA under an alias keytool lists, and loses it again")
    func javaStore() throws {
        guard tool("keytool") != nil else {
            print("skipped: no keytool (a JDK) on this machine")
            return
        }
        let directory = try CLI.workingDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("sluice.yaml").path
        try "tls: { intercept: [localhost], ca_cert: ca.pem, ca_key: ca.key }\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        let cacerts = directory.appendingPathComponent("cacerts").path
        // A key store that is not there is a mistyped path: refused, not made.
        let mistyped = try CLI.run(["trust", "install", "--config", config, "--java-cacerts", cacerts])
        #expect(mistyped.status == 66 && mistyped.output.contains("no Java key store"), "\(mistyped.output)")
        #expect(!FileManager.default.fileExists(atPath: cacerts))
        let seeded = try shell(
            "cd \(directory.path) && openssl req -x509 -newkey rsa:2048 -nodes -keyout seed.key -out seed.pem -subj /CN=seed -days 1 2>&1 && keytool -importcert -noprompt -keystore \(cacerts) -storepass changeit -alias seed -file seed.pem 2>&1"
        )
        #expect(seeded.status == 0, "\(seeded.output)")
        let install = try CLI.run(["trust", "install", "--config", config, "--java-cacerts", cacerts])
        #expect(install.status == 0, "\(install.output)")
        let listed = try shell("keytool -list -keystore \(cacerts) -storepass changeit").output
        #expect(listed.contains("sluice-"), "\(listed)")
        // Debian's ca-certificates-java hook adds the system store's copy under an alias of its
        // own (`debian:sluice-ca-` and 8 hex digits `.pem`): status counts it, uninstall takes it out too.
        let short = try #require(listed.split(separator: "\n").first { $0.hasPrefix("sluice-") })
            .dropFirst("sluice-".count).prefix(8)
        let hooked = try shell(
            "keytool -importcert -noprompt -keystore \(cacerts) -storepass changeit -alias debian:sluice-ca-\(short).pem -file \(directory.path)/ca.pem"
        )
        #expect(hooked.status == 0, "\(hooked.output)")
        let uninstall = try CLI.run(["trust", "uninstall", "--config", config, "--java-cacerts", cacerts])
        #expect(uninstall.output.contains("removed"), "\(uninstall.output)")
        #expect(!(try shell("keytool -list -keystore \(cacerts) -storepass changeit").output.contains("sluice-")))
        let status = try CLI.run(["trust", "status", "--config", config, "--java-cacerts", cacerts])
        #expect(status.status == 1 && status.output.contains("NOT trusted"), "\(status.output)")
    }

    @Test("After a new CA, status names the earlier one still trusted, and uninstall --all takes it out")
    func earlierCA() throws {
        let scratch = try Scratch(tool: tool)
        defer { try? FileManager.default.removeItem(at: scratch.directory) }
        let (directory, config, store, nss, hasCertutil, places) = (
            scratch.directory, scratch.config, scratch.store, scratch.nss, scratch.hasCertutil, scratch.places
        )
        // Given the first CA trusted, then replaced by a new one (as after a leaked key)
        #expect(try CLI.run(["trust", "install"] + places).status == 0)
        for file in ["ca.pem", "ca.key"] {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(file))
        }
        let made = try CLI.run(["ca", "init", "--config", config])
        #expect(made.status == 0, "\(made.output)")
        // Then status names the first one, and a plain uninstall says it is still trusted
        let status = try CLI.run(["trust", "status"] + places)
        #expect(status.output.contains("other Sluice CAs: sluice-ca-"), "\(status.output)")
        let plain = try CLI.run(["trust", "uninstall"] + places)
        #expect(plain.output.contains("uninstall --all"), "\(plain.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store).count == 2, "the file and its link stay")
        // And uninstall --all takes it out of every place, but nothing named like it that is
        // not one of Sluice's names
        let lookalike = store + "/sluice-ca-prod.pem"
        try "not a Sluice CA\n".write(toFile: lookalike, atomically: true, encoding: .utf8)
        let all = try CLI.run(["trust", "uninstall", "--all"] + places)
        #expect(all.status == 0, "\(all.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store) == ["sluice-ca-prod.pem"])
        if hasCertutil { #expect(!(try shell("certutil -L -d sql:\(nss)").output.contains("Sluice local CA"))) }
        #expect(!(try CLI.run(["trust", "status"] + places).output.contains("other Sluice CAs")))
    }
}
