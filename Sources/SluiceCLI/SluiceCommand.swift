import ArgumentParser
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
        subcommands: [ServeCommand.self, CheckConfigCommand.self, CacheCommand.self, CACommand.self],
        defaultSubcommand: ServeCommand.self)
}

/// Options shared by commands that read the configuration.
struct ConfigOptions: ParsableArguments {
    @Option(name: .long, help: "Configuration file (default: conf/sluice.yaml if present, else built-in defaults).")
    var config: String?

    /// Loads the configuration, or explains exactly what is wrong.
    func load() throws -> (Configuration, String) {
        let path = config ?? (FileManager.default.fileExists(atPath: "conf/sluice.yaml") ? "conf/sluice.yaml" : nil)
        guard let path else { return (Configuration(), "built-in defaults") }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw ValidationError("cannot read configuration file \(path)")
        }
        do {
            return (try ConfigLoader.load(yaml: text, file: path), path)
        } catch {
            throw ValidationError("\(error)")
        }
    }
}

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the proxy.")

    @OptionGroup var options: ConfigOptions

    @Option(name: .long, help: "Listen address HOST:PORT, overriding the configuration.")
    var listen: String?

    @Option(name: .customLong("admin-listen"), help: "Admin API address HOST:PORT (loopback), or \"\" for none.")
    var adminListen: String?

    func run() throws {
        var (configuration, source) = try options.load()
        if let listen {
            do {
                configuration = try ConfigLoader.load(yaml: "listen: \"\(listen)\"").with(listen: listen)
                    .merging(into: configuration)
            } catch {
                throw ValidationError("--listen: \(error)")
            }
        }
        if let adminListen {
            do {
                configuration.admin.listen =
                    try ConfigLoader.load(yaml: "admin: { listen: \"\(adminListen)\" }").admin.listen
            } catch {
                throw ValidationError("--admin-listen: \(error)")
            }
        }
        let level = Logger.Level(rawValue: configuration.log.level) ?? .info
        // Lines are gathered and written in large pieces (`LogOutput`): the access log costs a
        // copy per request, not a system call.
        LoggingSystem.bootstrap { label in
            var handler = BufferedLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "sluice")
        logger.info("configuration: \(source)")
        do {
            let reload: (() throws -> Configuration)? =
                source == "built-in defaults" ? nil : { [options] in try options.load().0 }
            try ProxyRuntime.run(configuration: configuration, logger: logger, reload: reload)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }
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
        print("configuration OK: \(source)")
        for rule in configuration.rules {
            for range in rule.accept?.contentTypes ?? [] where !range.ignoredParameters.isEmpty {
                print(
                    "note: rule \(rule.name) accepts \(range); its parameters (\(range.ignoredParameters)) are not compared"
                )
            }
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
