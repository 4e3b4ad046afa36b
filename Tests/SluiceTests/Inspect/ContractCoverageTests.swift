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
}
