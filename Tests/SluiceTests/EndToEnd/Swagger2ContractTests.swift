import Foundation
import Sluice
import SluiceTestKit
import Testing

/// A Swagger 2.0 description as a rule's contract, with a real origin.
@Suite("Swagger 2.0 contracts through the proxy")
struct Swagger2ContractTests {
    static let document = """
        swagger: '2.0'
        info: {title: items, version: '1'}
        basePath: /api
        produces: [application/json]
        paths:
          /items/{id}:
            get:
              operationId: getItem
              parameters:
                - {name: id, in: path, required: true, type: integer}
              responses:
                '200':
                  description: an item
                  schema:
                    type: object
                    required: [id, name]
                    properties:
                      id: {type: integer}
                      name: {type: string}
                      note: {type: string, x-nullable: true}
        """

    @Test("enforce: a 2.0 response schema refuses a broken body, passes a good one; the base path counts")
    func enforce() throws {
        let directory = TestScratch.root.appendingPathComponent("sluice-swagger2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("items.yaml")
        try Data(Self.document.utf8).write(to: file)
        let origin = try OriginServer { request in
            let body = request.target.hasSuffix("/2") ? #"{"id": 2}"# : #"{"id": 1, "name": "lamp", "note": null}"#
            return .respond(status: 200, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
        }
        defer { origin.stop() }
        let configuration = try ConfigLoader.load(
            yaml: """
                rules:
                  - name: items
                    match: { host: "127.0.0.1" }
                    contract: { openapi: \(file.path), on_violation: enforce }
                """
        ).loadingContracts()
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        let good = try client.request(RawClient.get(origin.url("/api/items/1")))
        #expect(good.status == 200)
        #expect(good.header("sluice-validation")?.hasPrefix("passed") == true, "\(good.headers)")
        let broken = try client.request(RawClient.get(origin.url("/api/items/2")))
        #expect(broken.status == 502)
        let problem = try #require(try JSONSerialization.jsonObject(with: Data(broken.body)) as? [String: Any])
        let operation = try #require(problem["operation"] as? [String: Any])
        #expect(operation["operationId"] as? String == "getItem")
        let first = try #require((problem["violations"] as? [[String: Any]])?.first)
        #expect(first["keyword"] as? String == "required", "\(problem)")
    }

    @Test(
        "A list asked for as a Kubernetes watch says not-validated on its head (it streams, not the list), as its record does"
    )
    func watchIsNotValidated() throws {
        let directory = TestScratch.root.appendingPathComponent("sluice-swagger2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("k8s.yaml")
        try Data(
            """
            swagger: '2.0'
            info: {title: k8s, version: v1}
            paths:
              /api/v1/pods:
                get:
                  produces: [application/json, application/json;stream=watch]
                  responses: {'200': {description: OK, schema: {type: object, required: [items]}}}
            """.utf8
        ).write(to: file)
        let origin = try OriginServer { _ in
            .respond(
                status: 200, headers: [("Content-Type", "application/json")],
                body: Array(#"{"type": "ADDED", "object": {}}\#n"#.utf8))
        }
        defer { origin.stop() }
        let configuration = try ConfigLoader.load(
            yaml: """
                rules:
                  - name: k8s
                    match: { host: "127.0.0.1" }
                    contract: { openapi: \(file.path), on_violation: enforce }
                """
        ).loadingContracts()
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        let watched = try client.request(RawClient.get(origin.url("/api/v1/pods?watch=true")))
        #expect(watched.status == 200)
        #expect(watched.header("sluice-validation")?.hasPrefix("not-validated") == true, "\(watched.headers)")
    }

    @Test("requests: enforce: a request that breaks the contract is refused even when the cache holds the answer")
    func aHitChecksTheRequestToo() throws {
        let directory = TestScratch.root.appendingPathComponent("sluice-swagger2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Given a cacheable answer and a contract that requires a header of each request.
        let file = directory.appendingPathComponent("items.yaml")
        try Data(
            Self.document.replacingOccurrences(
                of: "- {name: id, in: path, required: true, type: integer}",
                with:
                    "- {name: id, in: path, required: true, type: integer}\n        - {name: X-Trace, in: header, required: true, type: string}"
            ).utf8
        ).write(to: file)
        let origin = try OriginServer { _ in
            .respond(
                status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "max-age=300")],
                body: Array(#"{"id": 1, "name": "lamp"}"#.utf8))
        }
        defer { origin.stop() }
        let configuration = try ConfigLoader.load(
            yaml: """
                cache:
                  path: \(directory.appendingPathComponent("c.sqlite").path)
                rules:
                  - name: items
                    match: { host: "127.0.0.1" }
                    contract: { openapi: \(file.path), requests: enforce }
                """
        ).loadingContracts()
        let proxy = try ProxyHarness(configuration: configuration)
        // When the answer is stored by a good request, then asked for without the header.
        let good = try RawClient(port: proxy.port).request(
            RawClient.get(origin.url("/api/items/1"), extra: "X-Trace: a1\r\n"))
        #expect(good.status == 200)
        let again = try RawClient(port: proxy.port).request(
            RawClient.get(origin.url("/api/items/1"), extra: "X-Trace: a2\r\n"))
        #expect(again.header("cache-status")?.contains("hit") == true, "\(again.headers)")
        let broken = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/api/items/1")))
        // Then it is refused as the origin's answer would have been, and the origin was asked once.
        #expect(broken.status == 400, "\(broken.headers)")
        #expect(origin.requests.count == 1)
    }
}
