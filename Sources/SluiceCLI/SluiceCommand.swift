import ArgumentParser
import Contract
import Foundation
import Logging
import Sluice

/// `sluice`: the command-line entry point.
@main
struct SluiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sluice",
        abstract: "A local HTTP forward proxy with response validation and caching.",
        version: SluiceVersion.current,
        subcommands: [
            ServeCommand.self, CheckConfigCommand.self, CacheCommand.self, ContractCommand.self, CACommand.self,
            TLSCommand.self, BreakpointCommand.self, PausedCommand.self,
            PathsCommand.self, RecordCommand.self, RunCommand.self, EnvCommand.self, TrustCommand.self,
        ],
        defaultSubcommand: ServeCommand.self)

    /// ArgumentParser's entry point, except that a ``CommandFailure`` is printed without the
    /// usage text and exits with its own code.
    /// Log lines still on their way to standard output (``LogOutput``) are written before the
    /// process ends, however it ends here.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
            LogOutput.standardOutput.flush(waitingUpTo: 2)
        } catch let failure as CommandFailure {
            LogOutput.standardOutput.flush(waitingUpTo: 2)
            FileHandle.standardError.write(Data("Error: \(failure.description)\n".utf8))
            Foundation.exit(failure.exitCode)
        } catch {
            LogOutput.standardOutput.flush(waitingUpTo: 2)
            exit(withError: error)
        }
    }
}

/// Options shared by commands that read the configuration.
struct ConfigOptions: ParsableArguments {
    @Option(
        name: .long,
        help: "Configuration file (default: $SLUICE_CONFIG if set, else built-in defaults; `sluice paths` shows which)."
    )
    var config: String?

    /// The configuration file in force: `--config`, else `$SLUICE_CONFIG`; `nil` for the built-in defaults.
    var file: String? {
        config ?? ProcessInfo.processInfo.environment["SLUICE_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Where files no configuration names live.
    var locations: FileLocations { .standard() }

    /// Loads the configuration with every file path absolute (relative ones in the file against
    /// its directory, the rest in the data directory), or explains exactly what is wrong.
    /// - Parameter creatingDataDirectory: create the data directory (0700) when a file lives there.
    func load(creatingDataDirectory: Bool = false) throws -> (Configuration, String) {
        var configuration: Configuration
        let source: String
        if let file {
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw CommandFailure.noInput("cannot read the configuration file \(file)")
            }
            do {
                configuration = try ConfigLoader.load(file: file)
            } catch {
                throw CommandFailure.failed("\(error)")
            }
            source = file
        } else {
            configuration = Configuration()
            source = "built-in defaults"
        }
        configuration = configuration.placingDefaultFiles(in: locations)
        if creatingDataDirectory, configuration.usesDataDirectory(locations) {
            do {
                try locations.createDataDirectory()
            } catch {
                throw CommandFailure.failed("cannot create the data directory \(locations.dataDirectory): \(error)")
            }
        }
        return (configuration, source)
    }

    /// A hint for a file that is not where this configuration says: another `--config` may be in use.
    var elsewhereHint: String { "is Sluice running with another --config? Pass that one here (or set SLUICE_CONFIG)" }
}

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the proxy.")

    @OptionGroup var options: ConfigOptions

    @Option(name: .long, help: "Listen address HOST:PORT, overriding the configuration.")
    var listen: String?

    @Option(name: .customLong("admin-listen"), help: "Admin API address HOST:PORT (loopback), or \"\" for none.")
    var adminListen: String?

    @Option(name: .long, help: "Record every exchange that passes into this recording (SQLite; created if missing).")
    var record: String?

    @Option(name: .long, help: "Answer requests from this recording (see --on-miss).")
    var replay: String?

    @Option(
        name: .customLong("on-miss"), help: "With --replay: fail (a 504 problem) or forward a request not recorded.")
    var onMiss: String?

    func run() throws {
        let (loaded, source) = try options.load(creatingDataDirectory: true)
        let configuration = try overriding(loaded)
        let level = Logger.Level(rawValue: configuration.log.level) ?? .info
        // Lines are gathered and written in large pieces (`LogOutput`): the access log costs a
        // copy per request, not a system call.
        LoggingSystem.bootstrap { label in
            var handler = BufferedLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "sluice")
        logger.info("configuration: \(source); cache \(configuration.cache.path) (`sluice paths` lists every file)")
        do {
            // A reload reads the same file and applies the same flags (a SIGHUP after `--listen`
            // must not look like a changed listen address).
            let reload: (() throws -> Configuration)? =
                options.file == nil ? nil : { [self] in try overriding(options.load().0) }
            try ProxyRuntime.run(configuration: configuration, logger: logger, reload: reload) { _ in
                // A CA made at this start replaces the one in `sluice env`'s bundle.
                if let bundle = ProxyEnvironment.refreshBundle(configuration) {
                    logger.notice("rewrote \(bundle) (sluice env's CA bundle) with this CA")
                }
            }
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }
    }
}

extension ServeCommand {
    /// `configuration` with `--listen` and `--admin-listen` applied.
    func overriding(_ loaded: Configuration) throws -> Configuration {
        var configuration = loaded
        if let listen {
            do {
                configuration = try ConfigLoader.load(yaml: "listen: \"\(listen)\"").with(listen: listen)
                    .merging(into: configuration)
            } catch {
                throw ValidationError("--listen: \(Self.flagProblem(error))")
            }
        }
        let here = FileManager.default.currentDirectoryPath
        if let record { configuration.record.file = FileLocations.resolve(record, against: here) }
        if let replay { configuration.replay.file = FileLocations.resolve(replay, against: here) }
        if let onMiss {
            guard let choice = Configuration.Replay.OnMiss(rawValue: onMiss) else {
                throw ValidationError("--on-miss: expected fail or forward, not \(onMiss)")
            }
            configuration.replay.onMiss = choice
        }
        if let adminListen {
            do {
                configuration.admin.listen =
                    try ConfigLoader.load(yaml: "admin: { listen: \"\(adminListen)\" }").admin.listen
            } catch {
                throw ValidationError("--admin-listen: \(Self.flagProblem(error))")
            }
        }
        return configuration
    }

    /// A flag's value checked as configuration: what is wrong, without the line of a file that
    /// does not exist.
    static func flagProblem(_ error: any Error) -> String {
        guard var problem = error as? ConfigError else { return "\(error)" }
        problem.line = nil
        return problem.description
    }
}

struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config", abstract: "Validate the configuration and report the first problem with its line.")

    @OptionGroup var options: ConfigOptions

    @Flag(name: .long, help: "Print every configuration key with its type, default and meaning.")
    var reference = false

    func run() throws {
        if reference {
            print(ConfigLoader.referenceMarkdown)
            return
        }
        let (configuration, source) = try options.load()
        // What `serve` would refuse to start with, said here too.
        if let refusal = ProxyServer.listenRefusal(configuration) { throw CommandFailure.failed(refusal.description) }
        if let refusal = ProxyServer.clientCertificateRefusal(configuration) {
            throw CommandFailure.failed(refusal.description)
        }
        print("configuration OK: \(source)")
        for warning in ProxyServer.likelyMistakes(configuration) { print("warning: \(warning)") }
        for rule in configuration.rules
        where rule.contract != nil && !rule.intercept && configuration.tls.intercept.isEmpty {
            print(
                "note: rule \(rule.name) checks a contract, and nothing is intercepted: https:// requests to its hosts go through blind tunnels, unchecked (intercept: true checks them)"
            )
        }
        for rule in configuration.rules {
            for range in rule.accept?.contentTypes ?? [] where !range.ignoredParameters.isEmpty {
                print(
                    "note: rule \(rule.name) accepts \(range); its parameters (\(range.ignoredParameters)) are not compared"
                )
            }
        }
        for rule in configuration.rules {
            guard let contract = rule.contract, let loaded = contract.loaded else { continue }
            print("contract: " + loaded.line(rule: rule.name, path: contract.source.path))
            guard case .openAPI(let document) = loaded.kind else { continue }
            for finding in document.findings { print("  \(finding)") }
        }
        for rule in configuration.rules where rule.tls?.verify == false {
            print(
                "warning: rule \(rule.name) has tls.verify: false: its origins' certificates are not checked (allowInvalidCertificates)"
            )
        }
    }
}

extension Configuration {
    /// This configuration's listen address applied to `base`.
    func merging(into base: Configuration) -> Configuration { base.with(listen: listen) }
}

/// This build's version (`sluice --version`, HAR `creator.version`).
enum SluiceVersion {
    static let current = "0.4.0"
}
