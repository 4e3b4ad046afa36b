import Sluice
import Testing

@testable import SluiceCLI

/// What reports write of text that came from traffic: Markdown that nothing in it can break.
@Suite("Report text")
struct ReportTextTests {
    @Test("Markdown cells escape |, HTML and line breaks; code spans take a fence longer than any backticks inside")
    func markdownEscaping() {
        #expect(
            ContractReport.cell("a|b <img src=x onerror=y> & </details>\nnext")
                == "a\\|b &lt;img src=x onerror=y&gt; &amp; &lt;/details&gt; next")
        #expect(ContractReport.code("/evil|key`\n- injected") == "``/evil|key` - injected``")
        #expect(ContractReport.code("`x`") == "`` `x` ``")
        #expect(ContractReport.code("plain") == "`plain`")
    }

    @Test("A schema reached through ../ is named by its own path in SARIF (RFC 3986 §5.2.4 dot segments removed)")
    func dotSegments() {
        #expect(SchemaPlaces.removingDotSegments("spec/../common/Error.yaml") == "common/Error.yaml")
        #expect(
            SchemaPlaces.removingDotSegments("/srv/api/spec/./v2/../../common/E.yaml")
                == "/srv/api/common/E.yaml")
        #expect(SchemaPlaces.removingDotSegments("../shared/E.yaml") == "../shared/E.yaml")
        #expect(SchemaPlaces.removingDotSegments("a/../../b.yaml") == "../b.yaml")
        #expect(SchemaPlaces.removingDotSegments("/../etc") == "/etc")
    }
}
