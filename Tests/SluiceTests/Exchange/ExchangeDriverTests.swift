import EventIO
import Foundation
import Logging
import SluiceTestKit
import Testing

@testable import Sluice

/// An exchange driven without a ``ProxyServer`` or a client socket: only its environment, a real
/// loop and libcurl session, a real origin, a real SQLite file, and a client stream of our own
/// that keeps what it is given (the `ClientStream` seam a TLS stream uses too).
@Suite("Exchange driver over its seams")
struct ExchangeDriverTests {
    /// A client stream that holds its output in memory and has no input (a GET without a body).
    final class MemoryStream: ClientStream {
        var output: [UInt8] = []
        var inputCount: Int { 0 }
        func withFirstInputSegment<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
            body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        func withInput<R>(upTo count: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
            body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        func drainInput(_ count: Int) {}
        func write(_ bytes: UnsafeRawBufferPointer, more: Bool) { output.append(contentsOf: bytes) }
        func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, more: Bool) {
            output.append(contentsOf: first)
            output.append(contentsOf: second)
        }
        func write(
            _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, _ third: UnsafeRawBufferPointer,
            more: Bool
        ) {
            for piece in [first, second, third] { output.append(contentsOf: piece) }
        }
        func write(
            _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, _ third: UnsafeRawBufferPointer,
            _ fourth: UnsafeRawBufferPointer, more: Bool
        ) {
            for piece in [first, second, third, fourth] { output.append(contentsOf: piece) }
        }
        func write(_ bytes: [UInt8]) { output.append(contentsOf: bytes) }
        func write(_ text: String) { output.append(contentsOf: Array(text.utf8)) }
        var outputCount: Int { 0 }
        var writeBroken: Bool { false }
    }

    /// The host side: stops the loop when the exchange is over.
    final class Host: ExchangeHost {
        let memory = MemoryStream()
        let loop: EventLoop
        var finished: (close: Bool, abort: Bool)?
        var heldHeadFlushes = 0
        init(loop: EventLoop) { self.loop = loop }
        var stream: any ClientStream { memory }
        var peerText: String { "test" }
        var isLocal: Bool { true }
        var inputClosed: Bool { false }
        func requestBodyDidEnd() {}
        func sendHeldHeadAtEndOfTurn() { heldHeadFlushes += 1 }
        func exchangeDidFinish(_ exchange: Exchange, closeConnection: Bool, abort: Bool) {
            finished = (closeConnection, abort)
            loop.stop()
        }
    }

    /// What one exchange wrote, and the record it left.
    struct Outcome: Sendable {
        var text: String
        var cacheStatus: String?
        var closed: Bool
    }

    final class Records: EventMonitor, @unchecked Sendable {
        var last: ExchangeRecord?
        func exchangeDidComplete(_ record: ExchangeRecord) { last = record }
    }

    /// Runs `urls` one after another through exchanges sharing one environment, on a loop thread.
    static func run(_ urls: [String], cachePath: String?) throws -> [Outcome] {
        let result = Locked<Result<[Outcome], any Error>>(.success([]))
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { done.signal() }
            do throws {
                let loop = try EventLoop()
                var configuration = Configuration()
                configuration.cache.path = cachePath ?? configuration.cache.path
                let session = Session(loop: loop, settings: Session.Settings(configuration))
                let records = Records()
                session.eventMonitor.add(records)
                let logger = Logger(label: "driver-test")
                let cache = try cachePath.map {
                    _ in
                    TieredCache(
                        file: try CacheStore(settings: configuration.cache, logger: logger), memoryBudget: 1 << 20)
                }
                let env = ExchangeEnvironment(
                    loop: loop, session: session, hooks: .init(), cache: cache, configuration: configuration,
                    policy: Policy(configuration: configuration), stats: Stats(), logger: logger)
                var outcomes: [Outcome] = []
                for url in urls {
                    let host = Host(loop: loop)
                    let request = ProxyRequest(
                        method: "GET", target: .absolute(TargetURL(url)!), rawTarget: url, minorVersion: 1,
                        headers: HTTPFields([("Host", "x")]), bodyFraming: .none)
                    let exchange = Exchange(client: host, env: env, request: request)
                    exchange.start()
                    if host.finished == nil { loop.run() }
                    // A head still held at the end of a turn goes out with the body here.
                    exchange.sendHeldHead()
                    outcomes.append(
                        Outcome(
                            text: String(decoding: host.memory.output, as: UTF8.self),
                            cacheStatus: records.last?.cacheStatus?.description, closed: host.finished?.close ?? true))
                }
                result.withLock { $0 = .success(outcomes) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
        }
        thread.stackSize = 8 << 20
        thread.start()
        done.wait()
        return try result.withLock { $0 }.get()
    }

    @Test("Given only an environment and a client stream, an exchange fetches, stores and then hits")
    func driveWithoutServer() throws {
        // Given an origin with a cacheable response and a cache file of our own
        let origin = try OriginServer { _ in
            .respond(
                status: 200, headers: [("Content-Type", "text/plain"), ("Cache-Control", "max-age=60")],
                body: Array("hello".utf8))
        }
        defer { origin.stop() }
        let path = TestScratch.root.appendingPathComponent("driver-\(UUID().uuidString).sqlite")
            .path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        // When two exchanges ask for it, one after the other
        let outcomes = try Self.run([origin.url("/d"), origin.url("/d")], cachePath: path)
        // Then the first went upstream and was stored, the second was served from the cache
        #expect(outcomes.count == 2)
        #expect(outcomes[0].text.hasPrefix("HTTP/1.1 200 OK\r\n") && outcomes[0].text.hasSuffix("\r\n\r\nhello"))
        #expect(outcomes[0].cacheStatus == "Sluice; fwd=uri-miss; stored")
        #expect(outcomes[1].text.hasSuffix("\r\n\r\nhello") && outcomes[1].text.contains("Age: "))
        #expect(outcomes[1].cacheStatus?.hasPrefix("Sluice; hit; ttl=") == true)
        #expect(outcomes.allSatisfy { !$0.closed })
        #expect(origin.requests.count == 1)
        #expect(origin.requests.first?.header("via") == "1.1 sluice")
    }

    @Test("Without a cache, a refused origin is a 502 problem written to the stream")
    func refusedOrigin() throws {
        // Given a port nobody listens on
        let origin = try OriginServer { _ in .text("x") }
        let url = origin.url("/gone")
        origin.stop()
        // When
        let outcome = try Self.run([url], cachePath: nil)
        // Then
        #expect(outcome.first?.text.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n") == true)
        #expect(outcome.first?.text.contains("application/problem+json") == true)
    }
}
