/// The meta-schemas of JSON Schema 2019-09, draft-07 and draft-06, written here from each
/// specification's keyword definitions (what each keyword's value must be), so that schemas that
/// `$ref` or name their dialect load without a network fetch.
extension MetaSchemas {
    /// 2019-09: a schema and one per vocabulary, joined by `$recursiveRef`.
    static let draft2019: [(String, String)] = [
        (
            "schema",
            """
            {"$schema": "https://json-schema.org/draft/2019-09/schema",
             "$id": "https://json-schema.org/draft/2019-09/schema", "$recursiveAnchor": true,
             "allOf": [{"$ref": "meta/core"}, {"$ref": "meta/applicator"}, {"$ref": "meta/validation"},
                       {"$ref": "meta/meta-data"}, {"$ref": "meta/format"}, {"$ref": "meta/content"}],
             "type": ["object", "boolean"],
             "properties": {
               "definitions": {"type": "object", "additionalProperties": {"$recursiveRef": "#"}},
               "dependencies": {"type": "object",
                                "additionalProperties": {"anyOf": [{"$recursiveRef": "#"},
                                                                   {"$ref": "meta/validation#/$defs/stringArray"}]}}}}
            """
        ),
        (
            "meta/core",
            """
            {"$schema": "https://json-schema.org/draft/2019-09/schema",
             "$id": "https://json-schema.org/draft/2019-09/meta/core", "$recursiveAnchor": true,
             "type": ["object", "boolean"],
             "properties": {
               "$id": {"type": "string", "pattern": "^[^#]*#?$"}, "$schema": {"type": "string"},
               "$anchor": {"type": "string", "pattern": "^[A-Za-z][-A-Za-z0-9.:_]*$"},
               "$ref": {"type": "string"}, "$recursiveRef": {"type": "string"},
               "$recursiveAnchor": {"type": "boolean"},
               "$vocabulary": {"type": "object", "additionalProperties": {"type": "boolean"}},
               "$comment": {"type": "string"},
               "$defs": {"type": "object", "additionalProperties": {"$recursiveRef": "#"}}}}
            """
        ),
        (
            "meta/applicator",
            """
            {"$schema": "https://json-schema.org/draft/2019-09/schema",
             "$id": "https://json-schema.org/draft/2019-09/meta/applicator", "$recursiveAnchor": true,
             "type": ["object", "boolean"],
             "properties": {
               "additionalItems": {"$recursiveRef": "#"}, "unevaluatedItems": {"$recursiveRef": "#"},
               "items": {"anyOf": [{"$recursiveRef": "#"}, {"$ref": "#/$defs/schemaArray"}]},
               "contains": {"$recursiveRef": "#"}, "additionalProperties": {"$recursiveRef": "#"},
               "unevaluatedProperties": {"$recursiveRef": "#"},
               "properties": {"type": "object", "additionalProperties": {"$recursiveRef": "#"}},
               "patternProperties": {"type": "object", "additionalProperties": {"$recursiveRef": "#"},
                                     "propertyNames": {"format": "regex"}},
               "dependentSchemas": {"type": "object", "additionalProperties": {"$recursiveRef": "#"}},
               "propertyNames": {"$recursiveRef": "#"}, "if": {"$recursiveRef": "#"},
               "then": {"$recursiveRef": "#"}, "else": {"$recursiveRef": "#"},
               "allOf": {"$ref": "#/$defs/schemaArray"}, "anyOf": {"$ref": "#/$defs/schemaArray"},
               "oneOf": {"$ref": "#/$defs/schemaArray"}, "not": {"$recursiveRef": "#"}},
             "$defs": {"schemaArray": {"type": "array", "minItems": 1, "items": {"$recursiveRef": "#"}}}}
            """
        ),
        (
            "meta/validation",
            """
            {"$schema": "https://json-schema.org/draft/2019-09/schema",
             "$id": "https://json-schema.org/draft/2019-09/meta/validation", "$recursiveAnchor": true,
             "type": ["object", "boolean"],
             "properties": {
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
               "dependentRequired": {"type": "object", "additionalProperties": {"$ref": "#/$defs/stringArray"}},
               "const": true, "enum": {"type": "array", "items": true},
               "type": {"anyOf": [{"$ref": "#/$defs/simpleTypes"},
                                  {"type": "array", "items": {"$ref": "#/$defs/simpleTypes"},
                                   "minItems": 1, "uniqueItems": true}]}},
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
            {"$schema": "https://json-schema.org/draft/2019-09/schema",
             "$id": "https://json-schema.org/draft/2019-09/meta/meta-data", "$recursiveAnchor": true,
             "type": ["object", "boolean"],
             "properties": {"title": {"type": "string"}, "description": {"type": "string"}, "default": true,
                            "deprecated": {"type": "boolean"}, "readOnly": {"type": "boolean"},
                            "writeOnly": {"type": "boolean"}, "examples": {"type": "array", "items": true}}}
            """
        ),
        (
            "meta/format",
            """
            {"$schema": "https://json-schema.org/draft/2019-09/schema",
             "$id": "https://json-schema.org/draft/2019-09/meta/format", "$recursiveAnchor": true,
             "type": ["object", "boolean"], "properties": {"format": {"type": "string"}}}
            """
        ),
        (
            "meta/content",
            """
            {"$schema": "https://json-schema.org/draft/2019-09/schema",
             "$id": "https://json-schema.org/draft/2019-09/meta/content", "$recursiveAnchor": true,
             "type": ["object", "boolean"],
             "properties": {"contentEncoding": {"type": "string"}, "contentMediaType": {"type": "string"},
                            "contentSchema": {"$recursiveRef": "#"}}}
            """
        ),
    ]

    /// Draft-07: draft-06 with `$comment`, `if`/`then`/`else`, `readOnly`/`writeOnly` and the
    /// content keywords.
    static let draft7 = """
        {"$schema": "http://json-schema.org/draft-07/schema#", "$id": "http://json-schema.org/draft-07/schema#",
         "definitions": {
           "schemaArray": {"type": "array", "minItems": 1, "items": {"$ref": "#"}},
           "nonNegativeInteger": {"type": "integer", "minimum": 0},
           "nonNegativeIntegerDefault0": {"allOf": [{"$ref": "#/definitions/nonNegativeInteger"}, {"default": 0}]},
           "simpleTypes": {"enum": ["array", "boolean", "integer", "null", "number", "object", "string"]},
           "stringArray": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "default": []}},
         "type": ["object", "boolean"],
         "properties": {
           "$id": {"type": "string", "format": "uri-reference"}, "$schema": {"type": "string", "format": "uri"},
           "$ref": {"type": "string", "format": "uri-reference"}, "$comment": {"type": "string"},
           "title": {"type": "string"}, "description": {"type": "string"}, "default": true,
           "readOnly": {"type": "boolean"}, "writeOnly": {"type": "boolean"},
           "examples": {"type": "array", "items": true},
           "multipleOf": {"type": "number", "exclusiveMinimum": 0},
           "maximum": {"type": "number"}, "exclusiveMaximum": {"type": "number"},
           "minimum": {"type": "number"}, "exclusiveMinimum": {"type": "number"},
           "maxLength": {"$ref": "#/definitions/nonNegativeInteger"},
           "minLength": {"$ref": "#/definitions/nonNegativeIntegerDefault0"},
           "pattern": {"type": "string", "format": "regex"},
           "additionalItems": {"$ref": "#"},
           "items": {"anyOf": [{"$ref": "#"}, {"$ref": "#/definitions/schemaArray"}]},
           "maxItems": {"$ref": "#/definitions/nonNegativeInteger"},
           "minItems": {"$ref": "#/definitions/nonNegativeIntegerDefault0"},
           "uniqueItems": {"type": "boolean"}, "contains": {"$ref": "#"},
           "maxProperties": {"$ref": "#/definitions/nonNegativeInteger"},
           "minProperties": {"$ref": "#/definitions/nonNegativeIntegerDefault0"},
           "required": {"$ref": "#/definitions/stringArray"},
           "additionalProperties": {"$ref": "#"},
           "definitions": {"type": "object", "additionalProperties": {"$ref": "#"}},
           "properties": {"type": "object", "additionalProperties": {"$ref": "#"}},
           "patternProperties": {"type": "object", "additionalProperties": {"$ref": "#"},
                                 "propertyNames": {"format": "regex"}},
           "dependencies": {"type": "object",
                            "additionalProperties": {"anyOf": [{"$ref": "#"}, {"$ref": "#/definitions/stringArray"}]}},
           "propertyNames": {"$ref": "#"}, "const": true, "enum": {"type": "array", "items": true},
           "type": {"anyOf": [{"$ref": "#/definitions/simpleTypes"},
                              {"type": "array", "items": {"$ref": "#/definitions/simpleTypes"},
                               "minItems": 1, "uniqueItems": true}]},
           "format": {"type": "string"}, "contentMediaType": {"type": "string"},
           "contentEncoding": {"type": "string"},
           "if": {"$ref": "#"}, "then": {"$ref": "#"}, "else": {"$ref": "#"},
           "allOf": {"$ref": "#/definitions/schemaArray"}, "anyOf": {"$ref": "#/definitions/schemaArray"},
           "oneOf": {"$ref": "#/definitions/schemaArray"}, "not": {"$ref": "#"}},
         "default": true}
        """

    /// Draft-06: boolean schemas, `$id`, `const`, `contains`, `propertyNames`, `examples`, and
    /// numeric `exclusiveMaximum`/`exclusiveMinimum`.
    static let draft6 = """
        {"$schema": "http://json-schema.org/draft-06/schema#", "$id": "http://json-schema.org/draft-06/schema#",
         "definitions": {
           "schemaArray": {"type": "array", "minItems": 1, "items": {"$ref": "#"}},
           "nonNegativeInteger": {"type": "integer", "minimum": 0},
           "nonNegativeIntegerDefault0": {"allOf": [{"$ref": "#/definitions/nonNegativeInteger"}, {"default": 0}]},
           "simpleTypes": {"enum": ["array", "boolean", "integer", "null", "number", "object", "string"]},
           "stringArray": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "default": []}},
         "type": ["object", "boolean"],
         "properties": {
           "$id": {"type": "string", "format": "uri-reference"}, "$schema": {"type": "string", "format": "uri"},
           "$ref": {"type": "string", "format": "uri-reference"},
           "title": {"type": "string"}, "description": {"type": "string"}, "default": {},
           "examples": {"type": "array", "items": {}},
           "multipleOf": {"type": "number", "exclusiveMinimum": 0},
           "maximum": {"type": "number"}, "exclusiveMaximum": {"type": "number"},
           "minimum": {"type": "number"}, "exclusiveMinimum": {"type": "number"},
           "maxLength": {"$ref": "#/definitions/nonNegativeInteger"},
           "minLength": {"$ref": "#/definitions/nonNegativeIntegerDefault0"},
           "pattern": {"type": "string", "format": "regex"},
           "additionalItems": {"$ref": "#"},
           "items": {"anyOf": [{"$ref": "#"}, {"$ref": "#/definitions/schemaArray"}]},
           "maxItems": {"$ref": "#/definitions/nonNegativeInteger"},
           "minItems": {"$ref": "#/definitions/nonNegativeIntegerDefault0"},
           "uniqueItems": {"type": "boolean"}, "contains": {"$ref": "#"},
           "maxProperties": {"$ref": "#/definitions/nonNegativeInteger"},
           "minProperties": {"$ref": "#/definitions/nonNegativeIntegerDefault0"},
           "required": {"$ref": "#/definitions/stringArray"},
           "additionalProperties": {"$ref": "#"},
           "definitions": {"type": "object", "additionalProperties": {"$ref": "#"}},
           "properties": {"type": "object", "additionalProperties": {"$ref": "#"}},
           "patternProperties": {"type": "object", "additionalProperties": {"$ref": "#"}},
           "dependencies": {"type": "object",
                            "additionalProperties": {"anyOf": [{"$ref": "#"}, {"$ref": "#/definitions/stringArray"}]}},
           "propertyNames": {"$ref": "#"}, "const": {}, "enum": {"type": "array"},
           "type": {"anyOf": [{"$ref": "#/definitions/simpleTypes"},
                              {"type": "array", "items": {"$ref": "#/definitions/simpleTypes"},
                               "minItems": 1, "uniqueItems": true}]},
           "format": {"type": "string"},
           "allOf": {"$ref": "#/definitions/schemaArray"}, "anyOf": {"$ref": "#/definitions/schemaArray"},
           "oneOf": {"$ref": "#/definitions/schemaArray"}, "not": {"$ref": "#"}},
         "default": {}}
        """
}
