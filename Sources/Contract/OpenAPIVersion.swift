/// Which OpenAPI a document is, read from its `openapi` field by major.minor ("3.10.0" is not
/// 3.1), and the JSON Schema dialect its schemas default to.
enum OpenAPIVersion {
    /// The version text, the dialect, and what to warn about.
    static func read(_ document: SourceDocument) throws(ContractError) -> (
        version: String, dialect: Dialect, notes: [ContractError]
    ) {
        let root = document.root
        guard let version = root["openapi"]?.string else {
            if let swagger = root["swagger"] {
                // Swagger 2.0 (OpenAPI 2.0): its Schema Object is draft-04's subset, read as 3.0's.
                if swagger.string == "2.0" { return ("2.0", .openAPI30, []) }
                let line = document.line(of: "/swagger")
                if let number = swagger.number, number == Number(2) {
                    // `swagger: 2.0` unquoted is a YAML number: its meaning is plain.
                    let note = ContractError(
                        file: document.uri, line: line, pointer: "/swagger",
                        message: "swagger is the string \"2.0\", not a number (quote it): read as 2.0")
                    return ("2.0", .openAPI30, [note])
                }
                let found = swagger.string.map { "\"\($0)\"" } ?? "is not the string \"2.0\""
                throw ContractError(
                    file: document.uri, line: line, pointer: "/swagger",
                    message: "swagger \(found): Sluice reads Swagger 2.0 and OpenAPI 3.0 to 3.2")
            }
            throw ContractError(
                file: document.uri, line: 1, pointer: "", message: "not an OpenAPI document (no openapi field)")
        }
        let minor = minor(of: version)
        switch minor {
        case "3.0": return (version, .openAPI30, [])
        case "3.1", "3.2":
            if let declared = root["jsonSchemaDialect"]?.string, Dialect(metaSchema: declared) == nil {
                throw ContractError(
                    file: document.uri, line: document.line(of: "/jsonSchemaDialect"), pointer: "/jsonSchemaDialect",
                    message: "unknown dialect \"\(declared)\"")
            }
            let dialect = root["jsonSchemaDialect"]?.string.flatMap { Dialect(metaSchema: $0) } ?? .draft2020
            return (version, dialect, [])
        default:
            throw ContractError(
                file: document.uri, line: document.line(of: "/openapi"), pointer: "/openapi",
                message: "OpenAPI \(version): Sluice reads 3.0, 3.1 and 3.2 (and Swagger 2.0)")
        }
    }

    /// `3.2` of `3.2.0` (`3.10` of `3.10.1`).
    static func minor(of version: String) -> String {
        version.split(separator: ".", omittingEmptySubsequences: false).prefix(2).joined(separator: ".")
    }
}
