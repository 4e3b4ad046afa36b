import EventIO
import Logging

/// The admin port (`admin.listen`, 127.0.0.1:8081): health, stats, metrics, the cache and a live
/// stream of exchanges, for people and scripts. Never the proxy port; loopback peers only;
/// requests naming a foreign `Host` or carrying a browser `Origin` are refused (DNS rebinding,
/// CSRF), and DELETE/POST need the token when one is configured.
public final class AdminServer {
    /// The bound address (the real port when configured with port 0).
    public private(set) var localAddress: SocketAddress
    unowned let proxy: ProxyServer
    let token: String
    let feed: EventFeed
    let metrics: AdminMetrics
    let startTime: Double
    private var listener: Listener?
    private var connections: [ObjectIdentifier: AdminConnection] = [:]

    /// Binds `listen` (a loopback `host:port`) next to `proxy`, on its loop.
    public init(proxy: ProxyServer, listen: String, token: String) throws(ListenFailure) {
        self.proxy = proxy
        self.token = token
        startTime = proxy.clock()
        feed = EventFeed(loop: proxy.loop)
        feed.clock = { [unowned proxy] in proxy.clock() }
        metrics = AdminMetrics()
        guard let address = Configuration.socketAddress(listen) else {
            throw ListenFailure(key: "admin.listen", address: listen, code: 0)
        }
        localAddress = address
        proxy.session.eventMonitor.add(feed)
        proxy.session.eventMonitor.add(metrics)
        proxy.environment.watcher = feed
        let listener = try ListenFailure.binding(key: "admin.listen", address: listen) { () throws(EventIOError) in
            try Listener(loop: proxy.loop, address: address) { [unowned self] fd, peer in
                self.accept(fd: fd, peer: peer)
            }
        }
        localAddress = listener.localAddress
        self.listener = listener
        proxy.addSelfAddress(localAddress, admin: true)
        // A page opened through the proxy (a browser set to use it) polls the API through it.
        let port = localAddress.port
        let hosts =
            localAddress.isUnspecified || localAddress.isLoopback
            ? ["127.0.0.1", "localhost", "[::1]"]
            : [localAddress.host.contains(":") ? "[\(localAddress.host)]" : localAddress.host]
        feed.adminURLPrefixes = hosts.map { "http://\($0):\(port)/" }
    }

    private func accept(fd: Int32, peer: SocketAddress) {
        let connection = Connection(loop: proxy.loop, fd: fd, peer: peer)
        // Loopback peers only, and not so many that the proxy runs out of descriptors.
        guard peer.unmapped.isLoopback else { return connection.close() }
        guard connections.count < AdminServer.connectionLimit else {
            // Said, not a silent close (a supervisor's /health probe would see an empty reply),
            // and logged at most once a minute.
            let body =
                #"{"error":"the admin port has \#(AdminServer.connectionLimit) connections open (event streams included); try again"}"#
            connection.write(
                Array(
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nRetry-After: 1\r\nConnection: close\r\n\r\n\(body)"
                        .utf8))
            connection.closeAfterFlush(lingerMilliseconds: 500)
            lingering.append(connection)
            if lingering.count > 64 { lingering.removeAll { $0.isClosed } }
            let now = EventLoop.monotonicNanoseconds()
            if now &- lastRefusalLogged > 60_000_000_000 || lastRefusalLogged == 0 {
                lastRefusalLogged = now
                proxy.logger.warning(
                    "admin port: \(AdminServer.connectionLimit) connections open (event streams included); new ones get 503"
                )
            }
            return
        }
        let admin = AdminConnection(connection: connection, server: self)
        connections[ObjectIdentifier(admin)] = admin
    }

    func connectionDidClose(_ connection: AdminConnection) {
        connections[ObjectIdentifier(connection)] = nil
        feed.unsubscribe(connection)
        // A connection flushing its answer before the close must outlive its AdminConnection.
        if !connection.connection.isClosed {
            lingering.removeAll { $0.isClosed }
            lingering.append(connection.connection)
        }
    }

    /// Connections still writing their last bytes (closed by their linger timer at the latest).
    private var lingering: [Connection] = []

    /// Stops accepting and closes every admin connection (event streams included).
    public func close() {
        listener = nil
        for connection in Array(connections.values) { connection.close() }
    }

    /// When a refusal at the limit was last logged.
    private var lastRefusalLogged: UInt64 = 0

    /// Most admin connections (event streams included) at once; more get a 503 at accept.
    static let connectionLimit = 64

    /// Admin connections open now.
    public var openConnections: Int { connections.count }
}
