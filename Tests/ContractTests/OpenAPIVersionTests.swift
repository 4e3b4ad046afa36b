import Contract
import XCTest

final class OpenAPIVersionTests: XCTestCase {
    /// 3.0, 3.1 and 3.2 are read; a minor version Sluice does not know (3.10 is not 3.1) is refused.
    func testOpenAPIVersionsAreReadByMajorAndMinor() throws {
        let current = try OpenAPITests.document("3.2.0", schema: "{type: integer}")
        XCTAssertTrue(current.warnings.isEmpty, "\(current.warnings)")
        XCTAssertTrue(try OpenAPITests.bodySchema(current).validate(Array("5".utf8)).passed)
        XCTAssertTrue(try OpenAPITests.document("3.1.1", schema: "{type: integer}").warnings.isEmpty)
        for version in ["3.10.0", "3.3.0", "4.0.0"] {
            XCTAssertThrowsError(try OpenAPITests.document(version, schema: "{type: integer}"), version) { error in
                XCTAssertTrue("\(error)".contains("Sluice reads 3.0, 3.1 and 3.2"), "\(error)")
            }
        }
    }
}
