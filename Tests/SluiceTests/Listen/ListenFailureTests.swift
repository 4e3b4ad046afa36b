import EventIO
import Logging
import Sluice
import SluiceTestKit
import Testing

@Suite("Listening: a port that cannot be had stops the start")
struct ListenFailureTests {
    static func configuration(listen: String, admin: String = "") throws -> Configuration {
        var configuration = try ConfigLoader.load(yaml: "cache: { enabled: false }\n")
        configuration.listen = listen
        configuration.admin.listen = admin
        return configuration
    }

    @Test("The proxy port taken: a ListenFailure that names the key, the address and the reason")
    func proxyPortTaken() throws {
        // Given a port another socket holds
        let taken = try TestListener()
        defer { taken.closeUnused() }
        let address = "127.0.0.1:\(taken.port)"

        // When a server is made on it
        #expect {
            _ = try ProxyServer(
                configuration: try Self.configuration(listen: address), loop: try EventLoop(),
                logger: Logger(label: "test"))
        } throws: { error in
            // Then it says which key, which address and why
            guard let failure = error as? ListenFailure else { return false }
            return failure.key == "listen" && failure.address == address
                && failure.description.contains("cannot listen on \(address) (listen): Address already in use")
        }
    }

    @Test("The admin port taken: the admin server refuses, and says how to run without the page")
    func adminPortTaken() throws {
        let taken = try TestListener()
        defer { taken.closeUnused() }
        let loop = try EventLoop()
        let proxy = try ProxyServer(
            configuration: try Self.configuration(listen: "127.0.0.1:0"), loop: loop, logger: Logger(label: "test"))
        #expect {
            _ = try AdminServer(proxy: proxy, listen: "127.0.0.1:\(taken.port)", token: "")
        } throws: { error in
            guard let failure = error as? ListenFailure else { return false }
            return failure.key == "admin.listen" && failure.description.contains("admin.listen: \"\"")
        }
    }

    @Test("An address that is not HOST:PORT is refused before any bind")
    func unparsable() throws {
        #expect(throws: ListenFailure.self) {
            _ = try ProxyServer(
                configuration: try Self.configuration(listen: "nowhere"), loop: try EventLoop(),
                logger: Logger(label: "test"))
        }
    }
}
