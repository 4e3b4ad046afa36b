import Foundation
import SQLite
import SluiceTestKit
import Synchronization
import Testing

@testable import Sluice

/// Removing what a hit is still reading: the hit finishes with the bytes it began with.
@Suite("Removal during a streaming hit")
struct CacheRemovalTests {
    /// 24 MiB: more than the memory tier keeps and than loopback's socket buffers hold, so the
    /// hit reads its chunks from the file while its client waits.
    static let size = 24 * 1024 * 1024

    /// An origin whose cacheable body is `size` bytes of `byte()` (asked at each request), and a
    /// proxy that keeps such entries, with its admin port.
    static func start(_ byte: @escaping @Sendable () -> UInt8) throws -> (OriginServer, ProxyHarness, UInt16) {
        let origin = try OriginServer { _ in
            .respond(
                status: 200, headers: [("Cache-Control", "max-age=600"), ("Content-Type", "application/octet-stream")],
                body: [UInt8](repeating: byte(), count: Self.size))
        }
        do {
            var configuration = Configuration()
            configuration.cache.maxEntrySize = 64 * 1024 * 1024
            let proxy = try ProxyHarness(configuration: configuration)
            return (origin, proxy, try proxy.startAdmin())
        } catch {
            origin.stop()
            throw error
        }
    }

    @Test(
        "A stored response replaced, then purged, while a hit streams it: the hit ends whole with its own bytes; the rows go after it"
    )
    func replacedAndPurgedWhileStreaming() throws {
        let version = Mutex(UInt8(ascii: "A"))
        let (origin, proxy, admin) = try Self.start { version.withLock { $0 } }
        defer { origin.stop() }
        let url = origin.url("/big")
        let first = try RawClient(port: proxy.port).request(RawClient.get(url))
        #expect(first.header("cache-status") == "Sluice; fwd=uri-miss; stored" && first.body.count == Self.size)

        // A hit that reads 1 MiB, then waits.
        let slow = try RawClient(port: proxy.port)
        try slow.send(RawClient.get(url))
        let head = try #require(try slow.reader.readHead())
        #expect(head.fields.contains { $0.0.lowercased() == "cache-status" && $0.1.hasPrefix("Sluice; hit") })
        var received = try slow.reader.readExactly(1024 * 1024)
        // Read from the file chunk by chunk, under a lease (not from memory).
        #expect(proxy.onLoop { $0.cache?.readers.values.reduce(0, +) == 1 })

        // Meanwhile the origin's new version replaces it (a client's no-cache), and then a purge
        // of everything removes that one too.
        version.withLock { $0 = UInt8(ascii: "B") }
        let other = try RawClient(port: proxy.port)
        let replaced = try other.request(RawClient.get(url, extra: "Cache-Control: no-cache\r\n"))
        #expect(replaced.body.first == UInt8(ascii: "B") && replaced.body.count == Self.size)
        let hit = try other.request(RawClient.get(url))
        #expect(hit.header("cache-status")?.hasPrefix("Sluice; hit") == true && hit.body.first == UInt8(ascii: "B"))
        let purge = try RawClient(port: admin).request(
            "POST /purge?all HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\nContent-Length: 0\r\n\r\n")
        #expect(purge.status == 200)

        // The slow hit goes on, whole, with nothing but the version it began with.
        received += try slow.reader.readExactly(Self.size - received.count)
        #expect(received.count == Self.size)
        #expect(received.allSatisfy { $0 == UInt8(ascii: "A") }, "bytes of another response in the hit")

        // Once it ended, its rows are gone too: nothing but the purge's emptiness is left.
        let path = proxy.onLoop { $0.configuration.cache.path }
        let file = try Database(path: path, readOnly: true)
        #expect(
            try eventually {
                let count = try file.prepare("SELECT COUNT(*) FROM chunks")
                _ = try count.step()
                return count.int64(at: 0) == 0
            })
        #expect(proxy.onLoop { $0.cache?.readers.isEmpty == true && $0.cache?.doomed.isEmpty == true })
    }

    @Test("A purge of one URL while a hit streams it: the hit ends whole; the next request is a miss")
    func purgedWhileStreaming() throws {
        let (origin, proxy, admin) = try Self.start { 0x5A }
        defer { origin.stop() }
        let url = origin.url("/one")
        #expect(try RawClient(port: proxy.port).request(RawClient.get(url)).body.count == Self.size)
        let slow = try RawClient(port: proxy.port)
        try slow.send(RawClient.get(url))
        _ = try #require(try slow.reader.readHead())
        var received = try slow.reader.readExactly(512 * 1024)
        #expect(proxy.onLoop { $0.cache?.readers.values.reduce(0, +) == 1 })
        let escaped = url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? url
        let purge = try RawClient(port: admin).request(
            "POST /purge?key=\(escaped) HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\nContent-Length: 0\r\n\r\n")
        #expect(purge.status == 200 && purge.text.contains("\"purged\":1"), "\(purge.text)")
        let after = try RawClient(port: proxy.port).request(RawClient.get(url))
        #expect(after.header("cache-status")?.hasPrefix("Sluice; fwd=uri-miss") == true, "\(after.headers)")
        received += try slow.reader.readExactly(Self.size - received.count)
        #expect(received.allSatisfy { $0 == 0x5A })
        #expect(eventually { proxy.onLoop { $0.cache?.readers.isEmpty == true && $0.cache?.doomed.isEmpty == true } })
    }

    @Test(
        "A purge from another process (sluice cache purge) while a hit streams: the hit ends whole, the entry is hidden and goes after it"
    )
    func purgedElsewhereWhileStreaming() throws {
        let (origin, proxy, _) = try Self.start { 0x61 }
        defer { origin.stop() }
        let url = origin.url("/elsewhere")
        let kept = origin.url("/kept")
        #expect(try RawClient(port: proxy.port).request(RawClient.get(url)).body.count == Self.size)
        #expect(try RawClient(port: proxy.port).request(RawClient.get(kept)).body.count == Self.size)
        let slow = try RawClient(port: proxy.port)
        try slow.send(RawClient.get(url))
        _ = try #require(try slow.reader.readHead())
        var received = try slow.reader.readExactly(512 * 1024)
        #expect(proxy.onLoop { $0.cache?.readers.values.reduce(0, +) == 1 })
        // The CLI's purge: its own connection to the file, in this (another) thread.
        let settings = proxy.onLoop { $0.configuration.cache }
        let purged = try CacheInspector(settings: settings, writable: true).purge(.all)
        #expect(purged.entries == 2 && purged.hidden == 1, "\(purged)")
        let after = try RawClient(port: proxy.port).request(RawClient.get(url))
        #expect(after.header("cache-status")?.hasPrefix("Sluice; fwd=uri-miss") == true, "\(after.headers)")
        received += try slow.reader.readExactly(Self.size - received.count)
        #expect(received.count == Self.size && received.allSatisfy { $0 == 0x61 })
        // Its rows went with the hit; the list of what is read is empty again. (The miss above
        // stored the URL afresh: one entry, one body.)
        let file = try Database(path: settings.path, readOnly: true)
        #expect(
            try eventually {
                let rows = try file.prepare(
                    "SELECT (SELECT COUNT(*) FROM entries WHERE complete<>1), (SELECT COUNT(*) FROM reading), (SELECT COUNT(DISTINCT entry) FROM chunks)"
                )
                _ = try rows.step()
                return rows.int64(at: 0) == 0 && rows.int64(at: 1) == 0 && rows.int64(at: 2) == 1
            })
        #expect(proxy.onLoop { $0.cache?.readers.isEmpty == true && $0.cache?.doomed.isEmpty == true })
    }

    @Test("A stored body downloaded from the admin API while everything is purged: the download ends whole")
    func adminDownloadAcrossAPurge() throws {
        let (origin, proxy, admin) = try Self.start { 0x42 }
        defer { origin.stop() }
        #expect(try RawClient(port: proxy.port).request(RawClient.get(origin.url("/dl"))).body.count == Self.size)
        let listed = try RawClient(port: admin).request("GET /cache HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\n\r\n")
        let entries = try #require((try? JSONSerialization.jsonObject(with: Data(listed.body))) as? [[String: Any]])
        let id = try #require(entries.first?["id"] as? Int)
        let download = try RawClient(port: admin)
        try download.send("GET /cache/\(id)/body HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\n\r\n")
        _ = try #require(try download.reader.readHead())
        var received = try download.reader.readExactly(512 * 1024)
        #expect(proxy.onLoop { $0.cache?.readers.values.reduce(0, +) == 1 })
        let purge = try RawClient(port: admin).request(
            "POST /purge?all HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\nContent-Length: 0\r\n\r\n")
        #expect(purge.status == 200)
        received += try download.reader.readExactly(Self.size - received.count)
        #expect(received.allSatisfy { $0 == 0x42 })
        #expect(eventually { proxy.onLoop { $0.cache?.readers.isEmpty == true && $0.cache?.doomed.isEmpty == true } })
    }
}
