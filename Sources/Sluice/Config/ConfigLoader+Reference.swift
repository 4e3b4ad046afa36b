/// The key reference, generated from the keys themselves.
extension ConfigLoader {
    /// The key reference as a Markdown table (docs/configuration.md, `sluice check-config --reference`).
    public static var referenceMarkdown: String {
        var lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
        // A `|` inside a cell would end it: escape it.
        func cell(_ text: String) -> String {
            text.split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|")
        }
        for key in keys {
            lines.append("| `\(key.path)` | \(cell(key.type)) | `\(key.defaultValue)` | \(cell(key.summary)) |")
        }
        for key in RuleParser.ruleKeys {
            lines.append("| `\(key.path)` | \(cell(key.type)) | `\(key.defaultValue)` | \(cell(key.summary)) |")
        }
        return lines.joined(separator: "\n")
    }
}
