import Foundation

/// The part of JSON Schema the HAR schema uses: type, required, properties, items, pattern,
/// minimum and local `$ref`s. Returns every violation with its JSON path.
struct SchemaValidator {
    let root: [String: Any]

    init(file: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        root = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    func validate(_ value: Any) -> [String] {
        var problems: [String] = []
        check(value, against: root, path: "$", problems: &problems)
        return problems
    }

    private func resolve(_ schema: [String: Any]) -> [String: Any] {
        guard let reference = schema["$ref"] as? String, reference.hasPrefix("#/") else { return schema }
        var node: Any = root
        for part in reference.dropFirst(2).split(separator: "/") {
            node = (node as? [String: Any])?[String(part)] ?? [:]
        }
        return node as? [String: Any] ?? [:]
    }

    private static func isInteger(_ value: Any) -> Bool {
        guard let number = value as? NSNumber else { return false }
        return number.doubleValue == number.doubleValue.rounded()
    }

    private func check(_ value: Any, against raw: [String: Any], path: String, problems: inout [String]) {
        let schema = resolve(raw)
        if let type = schema["type"] as? String {
            let fits: Bool =
                switch type {
                case "object": value is [String: Any]
                case "array": value is [Any]
                case "string": value is String
                case "integer": Self.isInteger(value)
                case "number": value is NSNumber
                case "boolean": value is Bool
                default: true
                }
            guard fits else {
                problems.append("\(path): expected \(type), got \(Swift.type(of: value))")
                return
            }
        }
        if let object = value as? [String: Any] {
            for key in schema["required"] as? [String] ?? [] where object[key] == nil {
                problems.append("\(path): missing \(key)")
            }
            for (key, child) in schema["properties"] as? [String: [String: Any]] ?? [:] {
                if let member = object[key] {
                    check(member, against: child, path: "\(path).\(key)", problems: &problems)
                }
            }
        }
        if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            for (index, item) in array.enumerated() {
                check(item, against: items, path: "\(path)[\(index)]", problems: &problems)
            }
        }
        if let pattern = schema["pattern"] as? String, let text = value as? String,
            text.range(of: pattern, options: .regularExpression) == nil
        {
            problems.append("\(path): \"\(text)\" does not match \(pattern)")
        }
        if let minimum = schema["minimum"] as? Double, let number = value as? NSNumber, number.doubleValue < minimum {
            problems.append("\(path): \(number) is below \(minimum)")
        }
    }
}
