import ArgumentParser
import Foundation
import Sluice

/// `sluice paths`: where this configuration keeps everything, and whether each file exists yet.
struct PathsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "paths", abstract: "Print where the configuration, cache and CA files are.")

    @OptionGroup var options: ConfigOptions

    @Flag(name: .long, help: "Machine-readable JSON.")
    var json = false

    func run() throws {
        let (configuration, source) = try options.load()
        let files: [(String, String)] = [
            ("cache", configuration.cache.path),
            ("ca_cert", configuration.tls.caCert),
            ("ca_key", configuration.tls.caKey),
        ]
        let config = options.file.map { FileLocations.resolve($0, against: FileManager.default.currentDirectoryPath) }
        if json {
            var object: [String: Any] = [
                "config": config ?? NSNull(), "data_directory": options.locations.dataDirectory,
            ]
            for (name, path) in files {
                object[name] = ["path": path, "exists": FileManager.default.fileExists(atPath: path)]
            }
            let data = try JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        print("config          \(config ?? source)")
        print("data directory  \(options.locations.dataDirectory)")
        for (name, path) in files {
            let label = ["cache": "cache", "ca_cert": "CA certificate", "ca_key": "CA key"][name] ?? name
            let state = FileManager.default.fileExists(atPath: path) ? "" : "  (not there yet)"
            print(label.padding(toLength: 16, withPad: " ", startingAt: 0) + path + state)
        }
    }
}
