import ArgumentParser
import Foundation
import Sluice

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A running proxy's admin API, for commands that act on the live process (the passthrough
/// windows exist only in its memory): `admin.listen` and `admin.token` from the configuration.
struct AdminClient {
    let base: String
    let token: String

    init(listen: String, token: String) throws {
        guard !listen.isEmpty else {
            throw CommandFailure.failed(
                "the admin API is off (admin.listen is empty); this needs a running proxy's admin port")
        }
        base = "http://" + listen
        self.token = token
    }

    /// Sends `method path` and returns the status and JSON body; a proxy that does not answer
    /// is a failure that says so.
    func call(_ method: String, _ path: String, body: Data? = nil) throws -> (status: Int, json: Any?) {
        // The admin port is on loopback: never through a proxy, not even Sluice itself when this
        // terminal was pointed at it (`sluice env`); URLSession on Linux reads these variables.
        for name in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"] {
            unsetenv(name)
        }
        guard let url = URL(string: base + path) else { throw CommandFailure.failed("bad admin URL \(base + path)") }
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.httpMethod = method
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if !token.isEmpty { request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization") }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: (Data?, URLResponse?, (any Error)?) = (nil, nil, nil)
        let session = URLSession(configuration: .ephemeral)
        session.dataTask(with: request) { data, response, error in
            result = (data, response, error)
            done.signal()
        }.resume()
        done.wait()
        session.finishTasksAndInvalidate()
        if let error = result.2 {
            throw CommandFailure.failed(
                "no proxy answered on the admin port \(base) (\(error.localizedDescription)); is `sluice serve` running with this configuration?"
            )
        }
        let status = (result.1 as? HTTPURLResponse)?.statusCode ?? 0
        let json = result.0.flatMap { try? JSONSerialization.jsonObject(with: $0) }
        if status == 401 {
            throw CommandFailure.failed("the admin API wants its token (admin.token) and refused this one")
        }
        return (status, json)
    }
}

/// `--admin HOST:PORT`: the running proxy's admin address when it is not the configuration's
/// `admin.listen` (a proxy started with `serve --admin-listen`). The token stays the configuration's.
struct AdminAddress: ParsableArguments {
    @Option(
        name: .customLong("admin"),
        help:
            "The running proxy's admin address HOST:PORT (default: the configuration's admin.listen); its token from $SLUICE_ADMIN_TOKEN, else admin.token."
    )
    var address: String?

    /// A client for the proxy at `--admin`, else at `configuration`'s admin address; its
    /// `admin.token` from `SLUICE_ADMIN_TOKEN` when set (a proxy started with another
    /// configuration than this command reads), else from the configuration.
    func client(_ configuration: Configuration) throws -> AdminClient {
        let token = ProcessInfo.processInfo.environment["SLUICE_ADMIN_TOKEN"] ?? configuration.admin.token
        return try AdminClient(listen: address ?? configuration.admin.listen, token: token)
    }

    /// The same, from the configuration `options` name.
    func client(_ options: ConfigOptions) throws -> AdminClient { try client(options.load().0) }
}
