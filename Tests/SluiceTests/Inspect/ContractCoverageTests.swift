import Contract
import Testing

@testable import Sluice

@Suite("Contract coverage")
struct ContractCoverageTests {
    @Test("Undocumented request paths are kept apart up to a bound per rule; past it they share one case per method")
    func undocumentedPathsAreBounded() {
        let coverage = ContractCoverage()
        let limit = ContractCoverage.maximumUndocumentedPaths
        let undocumented = Violation(
            pointer: "", keyword: "undocumented-operation", expected: "a path the document describes", found: "",
            schema: "")
        for index in 0..<(limit + 5) {
            let check = ContractCheck(
                rule: "shop", operationId: nil, method: "GET", template: nil, status: 200, bodyValidated: false,
                undocumented: [undocumented])
            coverage.add(
                rule: "shop", check: check, failure: nil, url: "http://h/users/\(index)?q=1", method: "GET", status: 200
            )
        }
        let documented = ContractCheck(
            rule: "shop", operationId: "getItem", method: "GET", template: "/items/{id}", status: 200,
            bodyValidated: true, undocumented: [])
        coverage.add(rule: "shop", check: documented, failure: nil, url: "http://h/items/1", method: "GET", status: 200)
        let cases = coverage.cases.map(\.value)
        #expect(cases.count == limit + 2)
        #expect(cases.first?.operation == "GET /users/0 (undocumented)" && cases.first?.documented == false)
        let more = cases.first { $0.operation == "GET (more undocumented paths than coverage keeps)" }
        #expect(more?.seen == 5)
        #expect(cases.last?.operation == "getItem (GET /items/{id})" && cases.last?.documented == true)
        #expect(coverage.exchanges(of: "shop").checked == limit + 6)
    }

    @Test("Past the first failures kept, one that breaks the contract somewhere new is kept too; URLs lose credentials")
    func distinctFailuresAndRedaction() {
        let coverage = ContractCoverage()
        let check = ContractCheck(
            rule: "shop", operationId: "getUser", method: "GET", template: "/users/{id}", status: 200,
            bodyValidated: true, undocumented: [])
        func failure(_ keyword: String, _ schema: String) -> ContractFailure {
            ContractFailure(
                rule: "shop", direction: .response, operationId: "getUser", method: "GET", template: "/users/{id}",
                violations: [Violation(pointer: "/role", keyword: keyword, expected: "x", found: "y", schema: schema)],
                total: 1)
        }
        for index in 0..<60 {
            coverage.add(
                rule: "shop", check: check, failure: failure("enum", "#/components/schemas/User/properties/role"),
                url: "http://h/users/\(index)", method: "GET", status: 200)
        }
        coverage.add(
            rule: "shop", check: check, failure: failure("writeOnly", "#/components/schemas/User/properties/password"),
            url: "http://user:pw@h/users/61?api_key=SECRET&Access_Token=T&q=kept&my_token=X", method: "GET", status: 200
        )
        let item = coverage.cases.map(\.value)[0]
        #expect(item.failed == 61 && item.failures.count == ContractReport.keptFailures + 1)
        let last = item.failures.last
        #expect(last?.violations.first?.keyword == "writeOnly")
        #expect(last?.url == "http://h/users/61?api_key=REDACTED&Access_Token=REDACTED&q=kept&my_token=REDACTED")
    }
}
