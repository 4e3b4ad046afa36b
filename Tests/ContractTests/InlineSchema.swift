import Contract

/// A schema written inline in a test, compiled as a document of its own.
func inlineSchema(_ text: String, formats: FormatMode = .annotate) throws -> SchemaValidator {
    let registry = SchemaRegistry()
    registry.add(try SourceDocument.read(text: text, uri: "https://sluice.invalid/s.json"))
    return try SchemaValidator.compile(
        "https://sluice.invalid/s.json", base: "https://sluice.invalid/s.json", registry: registry, formats: formats)
}
