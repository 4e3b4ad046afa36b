import Foundation

/// Where Sluice's files live, independent of the working directory.
///
/// Relative paths written in a configuration file are relative to that file's directory
/// (``Configuration/anchoringPaths(in:written:)``); the files a configuration does not name (or
/// every file, without a configuration) live in the per-user data directory:
/// `$XDG_DATA_HOME/sluice` (`~/.local/share/sluice`) on Linux, `~/Library/Application
/// Support/Sluice` on macOS. `serve` and every CLI command go through here, so they agree.
public struct FileLocations: Sendable, Equatable {
    /// The per-user data directory (not necessarily existing yet).
    public var dataDirectory: String

    /// - Parameter dataDirectory: where files no configuration names live.
    public init(dataDirectory: String) {
        self.dataDirectory = dataDirectory
    }

    /// The platform's per-user data directory for `environment` (the process's by default).
    /// `XDG_DATA_HOME` counts only when absolute, as the XDG Base Directory spec says.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> FileLocations {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        #if os(macOS)
            return FileLocations(dataDirectory: home + "/Library/Application Support/Sluice")
        #else
            if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
                return FileLocations(dataDirectory: (xdg as NSString).appendingPathComponent("sluice"))
            }
            return FileLocations(dataDirectory: home + "/.local/share/sluice")
        #endif
    }

    /// `path` made absolute against `directory`; absolute paths (and `~/…`) stay as written.
    public static func resolve(_ path: String, against directory: String) -> String {
        if path.hasPrefix("/") { return path }
        if path == "~" || path.hasPrefix("~/") { return (path as NSString).expandingTildeInPath }
        return ((directory as NSString).appendingPathComponent(path) as NSString).standardizingPath
    }

    /// Creates the data directory (and its parents) when missing; the directory itself gets mode
    /// 0700 (the CA key and the cache are the user's alone).
    public func createDataDirectory() throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: dataDirectory, isDirectory: &isDirectory), isDirectory.boolValue {
            return
        }
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dataDirectory)
    }
}

extension Configuration {
    /// The configuration keys whose values are files, with a default that lives in the data
    /// directory.
    public static let defaultedPathKeys = ["cache.path", "tls.ca_cert", "tls.ca_key"]

    /// Relative file paths written in a configuration file, made absolute against the file's
    /// `directory`. `written` names which of ``defaultedPathKeys`` the file set; the others keep
    /// their defaults for ``placingDefaultFiles(in:)``. Keys without a default (`ca_file`s) are
    /// always the file's own.
    public func anchoringPaths(in directory: String, written: Set<String>) -> Configuration {
        var copy = self
        if written.contains("cache.path") { copy.cache.path = FileLocations.resolve(cache.path, against: directory) }
        if written.contains("tls.ca_cert") { copy.tls.caCert = FileLocations.resolve(tls.caCert, against: directory) }
        if written.contains("tls.ca_key") { copy.tls.caKey = FileLocations.resolve(tls.caKey, against: directory) }
        copy.upstream.proxyCAFile = upstream.proxyCAFile.map { FileLocations.resolve($0, against: directory) }
        if let auth = proxyAuth {
            copy.proxyAuth?.passwordFile = FileLocations.resolve(auth.passwordFile, against: directory)
        }
        copy.record.file = record.file.map { FileLocations.resolve($0, against: directory) }
        copy.replay.file = replay.file.map { FileLocations.resolve($0, against: directory) }
        copy.defaults.tls = defaults.tls.map { $0.anchored(in: directory) }
        for index in copy.rules.indices {
            if let contract = rules[index].contract {
                copy.rules[index].contract?.source =
                    switch contract.source {
                    case .openAPI(let path): .openAPI(FileLocations.resolve(path, against: directory))
                    case .schema(let path): .schema(FileLocations.resolve(path, against: directory))
                    }
                copy.rules[index].contract?.refs = contract.refs.mapValues {
                    FileLocations.resolve($0, against: directory)
                }
            }
            if case .file(let path) = rules[index].respond?.body {
                copy.rules[index].respond?.body = .file(FileLocations.resolve(path, against: directory))
            }
            copy.rules[index].tls = rules[index].tls.map { $0.anchored(in: directory) }
        }
        return copy
    }

    /// The files still given by relative paths (the defaults) placed in `locations`' data directory.
    public func placingDefaultFiles(in locations: FileLocations) -> Configuration {
        var copy = self
        copy.cache.path = FileLocations.resolve(cache.path, against: locations.dataDirectory)
        copy.tls.caCert = FileLocations.resolve(tls.caCert, against: locations.dataDirectory)
        copy.tls.caKey = FileLocations.resolve(tls.caKey, against: locations.dataDirectory)
        return copy
    }

    /// Whether any of Sluice's own files lives in `locations`' data directory.
    public func usesDataDirectory(_ locations: FileLocations) -> Bool {
        [cache.path, tls.caCert, tls.caKey].contains { $0.hasPrefix(locations.dataDirectory + "/") }
    }
}

extension UpstreamTrust {
    /// The trust with its files (`ca_file`, `client_certificate`, `client_key`) relative to
    /// `directory` (the configuration file's).
    func anchored(in directory: String) -> UpstreamTrust {
        var copy = self
        copy.caFile = caFile.map { FileLocations.resolve($0, against: directory) }
        copy.clientCertificate = clientCertificate.map { FileLocations.resolve($0, against: directory) }
        copy.clientKey = clientKey.map { FileLocations.resolve($0, against: directory) }
        return copy
    }
}
