import Foundation
import SluiceTestKit
import Testing

@Suite("Where files live, and how commands fail")
struct PathsCommandTests {
    /// A fresh folder, removed by the caller.
    static func folder(_ name: String) throws -> URL {
        let directory = TestScratch.root.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Serves with `arguments` from `workingDirectory` until one request went through, then stops.
    static func serveOnce(_ arguments: [String], from workingDirectory: URL, dataHome: URL, origin: OriginServer) throws
    {
        let (process, pipe, port) = try CLI.serve(arguments, currentDirectory: workingDirectory, dataHome: dataHome)
        pipe.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        // SIGTERM lets the exchange finish and its entry be committed before the process exits.
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let response = try CLI.connect(port).request(RawClient.get(origin.url("/stored")))
        #expect(response.status == 200)
    }

    static func origin() throws -> OriginServer {
        try OriginServer { _ in
            .respond(status: 200, headers: [("Cache-Control", "max-age=600")], body: Array("kept".utf8))
        }
    }

    @Test("Relative paths in a config file start at its folder, whatever the working directory")
    func relativeToTheConfigFile() throws {
        // Given a config in one folder naming its cache relatively, and two other working folders
        let home = try Self.folder("conf-home")
        let elsewhere = try Self.folder("elsewhere")
        let dataHome = try Self.folder("data-home")
        defer { CLI.remove(home.path, elsewhere.path, dataHome.path) }
        try FileManager.default.createDirectory(
            at: home.appendingPathComponent("conf"), withIntermediateDirectories: true)
        let config = home.appendingPathComponent("conf/sluice.yaml")
        try "cache: { path: ../state/cache.sqlite }\nlog: { access: false }\n".write(
            to: config, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(
            at: home.appendingPathComponent("state"), withIntermediateDirectories: true)
        let origin = try Self.origin()
        defer { origin.stop() }

        // When the proxy runs from one folder and the CLI asks from another, by a relative --config
        try Self.serveOnce(["--config", config.path], from: elsewhere, dataHome: dataHome, origin: origin)
        let listed = try CLI.run(
            ["cache", "list", "--config", "../\(home.lastPathComponent)/conf/sluice.yaml", "--json"],
            currentDirectory: dataHome, dataHome: dataHome)

        // Then the file is beside the config, and both found it
        let file = home.appendingPathComponent("state/cache.sqlite").path
        #expect(FileManager.default.fileExists(atPath: file))
        #expect(!FileManager.default.fileExists(atPath: elsewhere.appendingPathComponent("state").path))
        #expect(listed.status == 0, "\(listed.output)")
        #expect(listed.output.contains(origin.url("/stored")))
        let paths = try CLI.run(["paths", "--config", config.path], currentDirectory: elsewhere, dataHome: dataHome)
        #expect(paths.status == 0)
        #expect(paths.output.contains("cache           \(file)\n"), "\(paths.output)")
    }

    @Test("Without a config, serve and the CLI share the per-user data directory, made 0700")
    func dataDirectory() throws {
        // Given no config and an empty XDG_DATA_HOME
        let dataHome = try Self.folder("xdg")
        let one = try Self.folder("cwd-one")
        let two = try Self.folder("cwd-two")
        defer { CLI.remove(dataHome.path, one.path, two.path) }
        let origin = try Self.origin()
        defer { origin.stop() }

        // When the proxy runs from one folder and `cache list` asks from another
        try Self.serveOnce([], from: one, dataHome: dataHome, origin: origin)
        let listed = try CLI.run(["cache", "list"], currentDirectory: two, dataHome: dataHome)

        // Then both used $XDG_DATA_HOME/sluice, which only its owner may enter
        let directory = dataHome.appendingPathComponent("sluice").path
        let mode = try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        #expect(FileManager.default.fileExists(atPath: directory + "/sluice.sqlite"))
        #expect(listed.status == 0 && listed.output.contains(origin.url("/stored")), "\(listed.output)")
        let paths = try CLI.run(["paths", "--json"], currentDirectory: two, dataHome: dataHome)
        let object = try JSONSerialization.jsonObject(with: Data(paths.output.utf8)) as? [String: Any]
        #expect(object?["data_directory"] as? String == directory)
        #expect((object?["cache"] as? [String: Any])?["exists"] as? Bool == true)
        #expect((object?["ca_cert"] as? [String: Any])?["exists"] as? Bool == false)
    }

    @Test("Runtime failures say what to do next, print no usage, and exit 66 or 1; usage errors exit 64")
    func failures() throws {
        let dataHome = try Self.folder("xdg-empty")
        defer { CLI.remove(dataHome.path) }

        let noCA = try CLI.run(["ca", "show"], dataHome: dataHome)
        #expect(noCA.status == 66)
        #expect(noCA.output.contains("no CA yet at \(dataHome.path)/sluice/sluice-ca.pem: run `sluice ca init`"))
        #expect(!noCA.output.contains("Usage:"))

        let noCache = try CLI.run(["cache", "list"], dataHome: dataHome)
        #expect(noCache.status == 66)
        #expect(noCache.output.contains("no cache at \(dataHome.path)/sluice/sluice.sqlite"))
        #expect(noCache.output.contains("another --config"))
        #expect(!noCache.output.contains("Usage:"))

        let noConfig = try CLI.run(["cache", "list", "--config", dataHome.path + "/missing.yaml"], dataHome: dataHome)
        #expect(noConfig.status == 66 && noConfig.output.contains("cannot read the configuration file"))

        let badConfig = try CLI.temporaryFile("cache: { capacity: lots }\n")
        defer { CLI.remove(badConfig) }
        let broken = try CLI.run(["check-config", "--config", badConfig], dataHome: dataHome)
        #expect(broken.status == 1 && broken.output.contains("cache.capacity") && !broken.output.contains("Usage:"))

        let usage = try CLI.run(["cache", "list", "--sort", "colour"], dataHome: dataHome)
        #expect(usage.status == 64 && usage.output.contains("Usage:"))
    }

    @Test("A port that cannot be had stops the start with a clear message; admin.listen \"\" runs without the page")
    func takenPorts() throws {
        let taken = try TestListener()
        defer { taken.closeUnused() }
        let probe = try TestListener()
        let free = probe.port
        probe.closeUnused()
        let dataHome = try Self.folder("xdg-ports")
        defer { CLI.remove(dataHome.path) }

        // The admin port taken: nothing starts
        let admin = try CLI.run(
            ["serve", "--listen", "127.0.0.1:\(free)", "--admin-listen", "127.0.0.1:\(taken.port)"],
            dataHome: dataHome)
        #expect(admin.status == 1)
        #expect(
            admin.output.contains("cannot listen on 127.0.0.1:\(taken.port) (admin.listen): Address already in use"))
        #expect(admin.output.contains("admin.listen: \"\""))
        #expect(!admin.output.contains("sluice listening"))

        // The proxy port taken
        let proxy = try CLI.run(
            ["serve", "--listen", "127.0.0.1:\(taken.port)", "--admin-listen", ""], dataHome: dataHome)
        #expect(proxy.status == 1)
        #expect(proxy.output.contains("cannot listen on 127.0.0.1:\(taken.port) (listen): Address already in use"))
    }
}
