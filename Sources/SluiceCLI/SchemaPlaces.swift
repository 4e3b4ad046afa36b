import Contract
import Foundation

/// Where a violated schema keyword is written: the file and line SARIF points code review at.
struct SchemaPlaces {
    private var documents: [String: (document: SourceDocument, lines: [Substring])?] = [:]

    /// The place of `violation`'s keyword in the contract at `contractPath`: its `schema`
    /// (`#/…`, `schemas/item.yaml#/…` beside the contract, or an absolute URI) and keyword.
    mutating func place(of violation: Violation, contractPath: String) -> (path: String, line: Int?) {
        let location = violation.schema
        guard let hash = location.firstIndex(of: "#") else { return (contractPath, nil) }
        let file = String(location[..<hash])
        let pointer = String(location[location.index(after: hash)...])
        let path: String
        if file.isEmpty {
            path = contractPath
        } else if file.hasPrefix("file://") {
            path = ContractError.shownPath(file)
        } else if file.contains("://") {
            return (file, nil)
        } else {
            // A relative reference is a URI: `sub%20dir/my%20schemas.yaml` is on disk with spaces.
            path = Self.removingDotSegments(
                (contractPath as NSString).deletingLastPathComponent + "/" + (file.removingPercentEncoding ?? file))
        }
        if documents[path] == nil {
            let text = FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
            documents[path] = text.flatMap { text in
                (try? SourceDocument.read(text: text, uri: "file://" + path)).map {
                    ($0, text.split(separator: "\n", omittingEmptySubsequences: false))
                }
            }
        }
        guard let (document, lines) = documents[path] ?? nil else { return (path, nil) }
        guard let objectLine = document.line(of: pointer) else { return (path, nil) }
        let keyword = violation.keyword
        guard document.root.resolve(pointer: pointer + "/" + Value.escape(keyword)) != nil else {
            return (path, objectLine)
        }
        // Lines are kept for objects and arrays; a keyword's own line is found from its object's.
        let first = max(objectLine - 1, 0)
        guard first < lines.count else { return (path, objectLine) }
        for index in first..<min(lines.count, objectLine + 200) {
            if Self.names(keyword, in: lines[index]) { return (path, index + 1) }
        }
        return (path, objectLine)
    }

    /// `spec/../common/Error.yaml` as `common/Error.yaml` (RFC 3986 §5.2.4, on the path's text:
    /// reports name a file one way, however a reference reached it). A `..` past the start stays.
    static func removingDotSegments(_ path: String) -> String {
        var kept: [Substring] = []
        let absolute = path.hasPrefix("/")
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch segment {
            case ".": continue
            case "..":
                if let last = kept.last, last != ".." {
                    kept.removeLast()
                } else if !absolute {
                    kept.append(segment)
                }
            default: kept.append(segment)
            }
        }
        return (absolute ? "/" : "") + kept.joined(separator: "/")
    }

    /// Whether `line` holds `keyword` as a YAML or JSON member name.
    private static func names(_ keyword: String, in line: Substring) -> Bool {
        if line.contains("\"\(keyword)\"") || line.contains("'\(keyword)'") { return true }
        guard let range = line.range(of: keyword + ":") else { return false }
        guard range.lowerBound > line.startIndex else { return true }
        let before = line[line.index(before: range.lowerBound)]
        return before == " " || before == "{" || before == "," || before == "-"
    }
}
