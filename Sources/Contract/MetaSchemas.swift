/// JSON Schema 2020-12's meta-schemas, written here from the specification's vocabulary
/// definitions (what each keyword's value must be), so that a schema may `$ref` the dialect
/// itself (`{"$ref": "https://json-schema.org/draft/2020-12/schema"}`) without a network fetch.
/// Their definitions have the published meta-schemas' names (`nonNegativeInteger`,
/// `stringArray`, draft-04's `positiveInteger` …): schemas `$ref` them (the official Swagger 2.0
/// schema does).
enum MetaSchemas {
    private static let base = "https://json-schema.org/draft/2020-12/"

    /// Every built-in meta-schema with the dialect it is written in: 2020-12's and 2019-09's
    /// vocabularies, draft-07's, draft-06's and draft-04's.
    static let documents: [(SourceDocument, Dialect)] =
        texts.compactMap { uri, text in (try? SourceDocument.read(text: text, uri: base + uri)).map { ($0, .draft2020) }
        }
        + draft2019.compactMap { uri, text in
            (try? SourceDocument.read(text: text, uri: "https://json-schema.org/draft/2019-09/" + uri)).map {
                ($0, .draft2019)
            }
        }
        + [
            ("http://json-schema.org/draft-07/schema", draft7, Dialect.draft7),
            ("http://json-schema.org/draft-06/schema", draft6, .draft6),
            ("http://json-schema.org/draft-04/schema", draft4, .draft4),
        ].compactMap { uri, text, dialect in (try? SourceDocument.read(text: text, uri: uri)).map { ($0, dialect) } }

    /// Draft-04's meta-schema, likewise written from its specification.
    private static let draft4 = """
        {"id": "http://json-schema.org/draft-04/schema#", "$schema": "http://json-schema.org/draft-04/schema#",
         "definitions": {
           "schemaArray": {"type": "array", "minItems": 1, "items": {"$ref": "#"}},
           "positiveInteger": {"type": "integer", "minimum": 0},
           "positiveIntegerDefault0": {"allOf": [{"$ref": "#/definitions/positiveInteger"}, {"default": 0}]},
           "simpleTypes": {"enum": ["array", "boolean", "integer", "null", "number", "object", "string"]},
           "stringArray": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": true},
           "schemaMap": {"type": "object", "additionalProperties": {"$ref": "#"}}},
         "type": "object",
         "properties": {
           "id": {"type": "string"}, "$schema": {"type": "string"}, "title": {"type": "string"},
           "description": {"type": "string"}, "default": {}, "format": {"type": "string"},
           "multipleOf": {"type": "number", "minimum": 0, "exclusiveMinimum": true},
           "maximum": {"type": "number"}, "exclusiveMaximum": {"type": "boolean"},
           "minimum": {"type": "number"}, "exclusiveMinimum": {"type": "boolean"},
           "maxLength": {"$ref": "#/definitions/positiveInteger"}, "minLength": {"$ref": "#/definitions/positiveIntegerDefault0"},
           "pattern": {"type": "string"},
           "additionalItems": {"anyOf": [{"type": "boolean"}, {"$ref": "#"}]},
           "items": {"anyOf": [{"$ref": "#"}, {"$ref": "#/definitions/schemaArray"}]},
           "maxItems": {"$ref": "#/definitions/positiveInteger"}, "minItems": {"$ref": "#/definitions/positiveIntegerDefault0"},
           "uniqueItems": {"type": "boolean"},
           "maxProperties": {"$ref": "#/definitions/positiveInteger"}, "minProperties": {"$ref": "#/definitions/positiveIntegerDefault0"},
           "required": {"$ref": "#/definitions/stringArray"},
           "additionalProperties": {"anyOf": [{"type": "boolean"}, {"$ref": "#"}]},
           "definitions": {"$ref": "#/definitions/schemaMap"}, "properties": {"$ref": "#/definitions/schemaMap"},
           "patternProperties": {"$ref": "#/definitions/schemaMap"},
           "dependencies": {"type": "object",
                            "additionalProperties": {"anyOf": [{"$ref": "#"}, {"$ref": "#/definitions/stringArray"}]}},
           "enum": {"type": "array", "minItems": 1, "uniqueItems": true},
           "type": {"anyOf": [{"$ref": "#/definitions/simpleTypes"},
                              {"type": "array", "items": {"$ref": "#/definitions/simpleTypes"},
                               "minItems": 1, "uniqueItems": true}]},
           "allOf": {"$ref": "#/definitions/schemaArray"}, "anyOf": {"$ref": "#/definitions/schemaArray"},
           "oneOf": {"$ref": "#/definitions/schemaArray"}, "not": {"$ref": "#"}},
         "dependencies": {"exclusiveMaximum": ["maximum"], "exclusiveMinimum": ["minimum"]}}
        """

    private static let texts: [(String, String)] = [
        (
            "schema",
            """
            {"$schema": "https://json-schema.org/draft/2020-12/schema",
             "$id": "https://json-schema.org/draft/2020-12/schema", "$dynamicAnchor": "meta",
             "allOf": [{"$ref": "meta/core"}, {"$ref": "meta/applicator"}, {"$ref": "meta/unevaluated"},
                       {"$ref": "meta/validation"}, {"$ref": "meta/meta-data"},
                       {"$ref": "meta/format-annotation"}, {"$ref": "meta/content"}],
             "type": ["object", "boolean"]}
            """
        ),
        (
            "meta/core",
            """
            {"$schema": "https://json-schema.org/draft/2020-12/schema",
             "$id": "https://json-schema.org/draft/2020-12/meta/core", "$dynamicAnchor": "meta",
             "type": ["object", "boolean"],
             "properties": {
               "$id": {"$ref": "#/$defs/uriReferenceString", "pattern": "^[^#]*#?$"},
               "$schema": {"$ref": "#/$defs/uriString"}, "$ref": {"$ref": "#/$defs/uriReferenceString"},
               "$anchor": {"$ref": "#/$defs/anchorString"}, "$dynamicRef": {"$ref": "#/$defs/uriReferenceString"},
               "$dynamicAnchor": {"$ref": "#/$defs/anchorString"},
               "$vocabulary": {"type": "object", "propertyNames": {"$ref": "#/$defs/uriString"},
                               "additionalProperties": {"type": "boolean"}},
               "$comment": {"type": "string"},
               "$defs": {"type": "object", "additionalProperties": {"$dynamicRef": "#meta"}}},
             "$defs": {"uriReferenceString": {"type": "string", "format": "uri-reference"},
                       "uriString": {"type": "string", "format": "uri"},
                       "anchorString": {"type": "string", "pattern": "^[A-Za-z_][-A-Za-z0-9._]*$"}}}
            """
        ),
        (
            "meta/applicator",
            """
            {"$schema": "https://json-schema.org/draft/2020-12/schema",
             "$id": "https://json-schema.org/draft/2020-12/meta/applicator", "$dynamicAnchor": "meta",
             "type": ["object", "boolean"],
             "properties": {
               "prefixItems": {"$ref": "#/$defs/schemaArray"}, "items": {"$dynamicRef": "#meta"},
               "contains": {"$dynamicRef": "#meta"}, "additionalProperties": {"$dynamicRef": "#meta"},
               "properties": {"type": "object", "additionalProperties": {"$dynamicRef": "#meta"}},
               "patternProperties": {"type": "object", "additionalProperties": {"$dynamicRef": "#meta"},
                                     "propertyNames": {"format": "regex"}},
               "dependentSchemas": {"type": "object", "additionalProperties": {"$dynamicRef": "#meta"}},
               "propertyNames": {"$dynamicRef": "#meta"}, "if": {"$dynamicRef": "#meta"},
               "then": {"$dynamicRef": "#meta"}, "else": {"$dynamicRef": "#meta"},
               "allOf": {"$ref": "#/$defs/schemaArray"}, "anyOf": {"$ref": "#/$defs/schemaArray"},
               "oneOf": {"$ref": "#/$defs/schemaArray"}, "not": {"$dynamicRef": "#meta"}},
             "$defs": {"schemaArray": {"type": "array", "minItems": 1, "items": {"$dynamicRef": "#meta"}}}}
            """
        ),
        (
            "meta/unevaluated",
            """
            {"$schema": "https://json-schema.org/draft/2020-12/schema",
             "$id": "https://json-schema.org/draft/2020-12/meta/unevaluated", "$dynamicAnchor": "meta",
             "type": ["object", "boolean"],
             "properties": {"unevaluatedItems": {"$dynamicRef": "#meta"},
                            "unevaluatedProperties": {"$dynamicRef": "#meta"}}}
            """
        ),
        (
            "meta/validation",
            """
            {"$schema": "https://json-schema.org/draft/2020-12/schema",
             "$id": "https://json-schema.org/draft/2020-12/meta/validation", "$dynamicAnchor": "meta",
             "type": ["object", "boolean"],
             "properties": {
               "type": {"anyOf": [{"$ref": "#/$defs/simpleTypes"},
                                  {"type": "array", "items": {"$ref": "#/$defs/simpleTypes"},
                                   "minItems": 1, "uniqueItems": true}]},
               "const": true, "enum": {"type": "array", "items": true},
               "multipleOf": {"type": "number", "exclusiveMinimum": 0},
               "maximum": {"type": "number"}, "exclusiveMaximum": {"type": "number"},
               "minimum": {"type": "number"}, "exclusiveMinimum": {"type": "number"},
               "maxLength": {"$ref": "#/$defs/nonNegativeInteger"}, "minLength": {"$ref": "#/$defs/nonNegativeIntegerDefault0"},
               "pattern": {"type": "string", "format": "regex"},
               "maxItems": {"$ref": "#/$defs/nonNegativeInteger"}, "minItems": {"$ref": "#/$defs/nonNegativeIntegerDefault0"},
               "uniqueItems": {"type": "boolean"},
               "maxContains": {"$ref": "#/$defs/nonNegativeInteger"}, "minContains": {"$ref": "#/$defs/nonNegativeInteger", "default": 1},
               "maxProperties": {"$ref": "#/$defs/nonNegativeInteger"}, "minProperties": {"$ref": "#/$defs/nonNegativeIntegerDefault0"},
               "required": {"$ref": "#/$defs/stringArray"},
               "dependentRequired": {"type": "object", "additionalProperties": {"$ref": "#/$defs/stringArray"}}},
             "$defs": {
               "nonNegativeInteger": {"type": "integer", "minimum": 0},
               "nonNegativeIntegerDefault0": {"$ref": "#/$defs/nonNegativeInteger", "default": 0},
               "stringArray": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "default": []},
               "simpleTypes": {"enum": ["array", "boolean", "integer", "null", "number", "object", "string"]}}}
            """
        ),
        (
            "meta/meta-data",
            """
            {"$schema": "https://json-schema.org/draft/2020-12/schema",
             "$id": "https://json-schema.org/draft/2020-12/meta/meta-data", "$dynamicAnchor": "meta",
             "type": ["object", "boolean"],
             "properties": {"title": {"type": "string"}, "description": {"type": "string"}, "default": true,
                            "deprecated": {"type": "boolean"}, "readOnly": {"type": "boolean"},
                            "writeOnly": {"type": "boolean"}, "examples": {"type": "array"}}}
            """
        ),
        (
            "meta/format-annotation",
            """
            {"$schema": "https://json-schema.org/draft/2020-12/schema",
             "$id": "https://json-schema.org/draft/2020-12/meta/format-annotation", "$dynamicAnchor": "meta",
             "type": ["object", "boolean"], "properties": {"format": {"type": "string"}}}
            """
        ),
        (
            "meta/content",
            """
            {"$schema": "https://json-schema.org/draft/2020-12/schema",
             "$id": "https://json-schema.org/draft/2020-12/meta/content", "$dynamicAnchor": "meta",
             "type": ["object", "boolean"],
             "properties": {"contentEncoding": {"type": "string"}, "contentMediaType": {"type": "string"},
                            "contentSchema": {"$dynamicRef": "#meta"}}}
            """
        ),
    ]
}
