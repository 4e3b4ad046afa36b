import ArgumentParser
import Foundation
import Sluice

/// `sluice ca init|show|export`: the local CA that intercepted HTTPS is signed with.
struct CACommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca", abstract: "The local CA for HTTPS interception: create, show, export (never the key).",
        subcommands: [Init.self, Show.self, Export.self])

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an ECDSA P-256 CA at tls.ca_cert / tls.ca_key (the key 0600).")
        @OptionGroup var options: ConfigOptions

        func run() throws {
            let configuration = try options.load(creatingDataDirectory: true).0
            let settings = configuration.tls
            do {
                let info = try LocalCA.create(settings, now: Date().timeIntervalSince1970).info
                print("created \(settings.caCert) and \(settings.caKey) (mode 0600)")
                CACommand.describe(info, settings: settings)
                if let bundle = ProxyEnvironment.refreshBundle(configuration) {
                    print("rewrote \(bundle) (sluice env's bundle) with the new CA")
                }
                FileHandle.standardError.write(
                    Data(
                        ("\n"
                            + LocalCA.trustInstructions(
                                certificatePath: settings.caCert, proxy: CACommand.reached(configuration.listen),
                                config: options.file) + "\n")
                            .utf8))
            } catch {
                throw CommandFailure.failed(error.description)
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Paths, SHA-256 fingerprint and validity.")
        @OptionGroup var options: ConfigOptions

        func run() throws {
            let settings = try options.load().0.tls
            CACommand.describe(try CACommand.certificate(settings, options: options), settings: settings)
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the CA certificate (PEM, or DER with --der); how to trust it goes to stderr.")
        @OptionGroup var options: ConfigOptions
        @Flag(name: .long, help: "DER instead of PEM (Android, some Java tools).")
        var der = false

        func run() throws {
            let configuration = try options.load().0
            let settings = configuration.tls
            let info = try CACommand.certificate(settings, options: options)
            FileHandle.standardOutput.write(der ? Data(info.der) : Data(info.pem.utf8))
            FileHandle.standardError.write(
                Data(
                    (LocalCA.trustInstructions(
                        certificatePath: settings.caCert, proxy: CACommand.reached(configuration.listen),
                        config: options.file) + "\n").utf8))
        }
    }

    /// The listen address as a client on this machine reaches it (a wildcard on loopback).
    static func reached(_ listen: String) -> String {
        guard let colon = listen.lastIndex(of: ":") else { return listen }
        let host = String(listen[..<colon])
        return (["0.0.0.0", "::", "[::]", ""].contains(host) ? "127.0.0.1" : host) + listen[colon...]
    }

    /// The CA certificate, or a failure that says what to do next.
    static func certificate(_ settings: Configuration.TLS, options: ConfigOptions) throws -> CertificateInfo {
        guard FileManager.default.fileExists(atPath: settings.caCert) else {
            let flag = options.file.map { " --config \($0)" } ?? ""
            throw CommandFailure.noInput(
                "no CA yet at \(settings.caCert): run `sluice ca init\(flag)`, or, if Sluice runs with another --config, pass that one here"
            )
        }
        do {
            return try LocalCA.certificate(settings)
        } catch {
            throw CommandFailure.failed(error.description)
        }
    }

    static func describe(_ info: CertificateInfo, settings: Configuration.TLS) {
        let format = ISO8601DateFormatter()
        print("certificate: \(settings.caCert)")
        print("key:         \(settings.caKey) (never printed, served or exported)")
        print("subject:     \(info.subject)")
        print("sha256:      \(info.sha256Fingerprint)")
        print(
            "valid:       \(format.string(from: Date(timeIntervalSince1970: Double(info.notBefore)))) to \(format.string(from: Date(timeIntervalSince1970: Double(info.notAfter))))"
        )
    }
}
