import Foundation

/// Configuration files on disk.
extension ConfigLoader {
    /// Reads and parses a configuration file; relative paths written in it are made absolute
    /// against its directory (``Configuration/anchoringPaths(in:written:)``).
    public static func load(file: String) throws(ConfigError) -> Configuration {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ConfigError(key: "", line: nil, message: "cannot read the configuration file", file: file)
        }
        let parsed: (configuration: Configuration, written: Set<String>)
        do {
            parsed = try parse(yaml: String(decoding: data, as: UTF8.self))
        } catch var error {
            error.file = file
            throw error
        }
        let absolute = FileLocations.resolve(file, against: FileManager.default.currentDirectoryPath)
        let directory = (absolute as NSString).deletingLastPathComponent
        do {
            return try parsed.configuration.anchoringPaths(in: directory, written: parsed.written).loadingContracts()
        } catch var error {
            error.file = error.file ?? file
            throw error
        }
    }
}
