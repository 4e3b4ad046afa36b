import CPCRE2

/// A regular expression in the ECMA-262 dialect that JSON Schema's `pattern` and
/// `patternProperties` use, compiled once by PCRE2 (JIT-compiled where the platform has it) and
/// matched with hard limits: a pattern that backtracks catastrophically ends with
/// ``Outcome/limitExceeded`` after a bounded amount of work instead of stalling its thread.
///
/// The pattern is first rewritten where PCRE2 and ECMA-262 disagree (``ECMAScriptPattern``: `\s`,
/// `\S`, `.`, `\v`, `\u…` written as `\x{…}`); the rest of ECMA-262's semantics come from PCRE2's
/// compatibility options: UTF-8 code points (`PCRE2_UTF`), `$` only at the very end (`PCRE2_DOLLAR_ENDONLY`), unset
/// back-references matching the empty string (`PCRE2_MATCH_UNSET_BACKREF`), `[]` as the empty
/// class (`PCRE2_ALLOW_EMPTY_CLASS`), and any of CR, LF and CRLF as line ends (`.` matches
/// neither). `\d` and `\w` are ASCII, as in ECMA-262.
///
/// Not thread-safe: one owner (the loop thread, or one CLI command) matches with it.
public final class Pattern {
    /// What a search found.
    public enum Outcome: Equatable, Sendable {
        /// The pattern matches somewhere in the subject (ECMA-262 patterns are not anchored).
        case match
        case noMatch
        /// The match limit or the depth limit stopped the search: the pattern is too costly for
        /// this subject (a verdict of its own, never a crash or a stall).
        case limitExceeded
        /// The subject is not valid UTF-8.
        case invalidSubject
    }

    /// The pattern as written.
    public let source: String
    /// Whether PCRE2 JIT-compiled it (false where the platform has no JIT).
    public let isJITCompiled: Bool

    private let code: OpaquePointer
    private let matchData: OpaquePointer
    private let context: OpaquePointer

    /// Compiles `source`.
    /// - Parameters:
    ///   - source: an ECMA-262 pattern.
    ///   - matchLimit: most backtracking steps one search may take; 1,000,000 by default
    ///     (PCRE2's default is ten times that: a `(a+)+$` on 30 `a`s and a `b` reaches it in
    ///     about a second on the interpreter).
    ///   - depthLimit: most nested backtracking frames; 10,000 by default.
    /// - Throws: ``PatternError`` with PCRE2's message and the offset in the pattern.
    public init(_ source: String, matchLimit: UInt32 = 1_000_000, depthLimit: UInt32 = 10_000) throws(PatternError) {
        self.source = source
        let source = Pattern.translatingPropertyNames(try ECMAScriptPattern.translate(source, strict: false))
        guard let compileContext = pcre2_compile_context_create_8(nil) else {
            throw PatternError(message: "out of memory", offset: 0)
        }
        defer { pcre2_compile_context_free_8(compileContext) }
        pcre2_set_newline_8(compileContext, UInt32(PCRE2_NEWLINE_ANYCRLF))
        let options =
            UInt32(PCRE2_UTF) | UInt32(PCRE2_DOLLAR_ENDONLY)
            | UInt32(PCRE2_MATCH_UNSET_BACKREF) | UInt32(PCRE2_ALLOW_EMPTY_CLASS)
        var errorCode: Int32 = 0
        var errorOffset = 0
        let compiled =
            source.utf8.withContiguousStorageIfAvailable { bytes in
                pcre2_compile_8(bytes.baseAddress, bytes.count, options, &errorCode, &errorOffset, compileContext)
            }
            ?? Array(source.utf8).withUnsafeBufferPointer { bytes in
                pcre2_compile_8(bytes.baseAddress, bytes.count, options, &errorCode, &errorOffset, compileContext)
            }
        guard let compiled else {
            throw PatternError(message: Pattern.message(errorCode), offset: errorOffset)
        }
        isJITCompiled = pcre2_jit_compile_8(compiled, UInt32(PCRE2_JIT_COMPLETE)) == 0
        guard let matchData = pcre2_match_data_create_from_pattern_8(compiled, nil),
            let context = pcre2_match_context_create_8(nil)
        else {
            pcre2_code_free_8(compiled)
            throw PatternError(message: "out of memory", offset: 0)
        }
        pcre2_set_match_limit_8(context, matchLimit)
        pcre2_set_depth_limit_8(context, depthLimit)
        code = compiled
        self.matchData = matchData
        self.context = context
    }

    /// PCRE2's refusal of a pattern already translated from ECMA-262 (no JIT, nothing kept),
    /// for what ECMA-262's early errors refuse too: a range out of order or with a class at an
    /// end (`[z-a]`, `[a-\d]`), a reference to no group (`\k<n>`, `\8`), a name given twice, a
    /// code point past U+10FFFF. PCRE2's other refusals are not ECMA-262's (a lone surrogate, a
    /// `$` in a group name, a property its tables lack: `\p{Assigned}`, a newer script; a
    /// lookbehind of variable width): `nil`.
    static func compileError(translated source: String) -> PatternError? {
        let source = translatingPropertyNames(source)
        let options =
            UInt32(PCRE2_UTF) | UInt32(PCRE2_DOLLAR_ENDONLY) | UInt32(PCRE2_ALLOW_EMPTY_CLASS)
        var errorCode: Int32 = 0
        var errorOffset = 0
        let compiled = Array(source.utf8).withUnsafeBufferPointer { bytes in
            pcre2_compile_8(bytes.baseAddress, bytes.count, options, &errorCode, &errorOffset, nil)
        }
        if let compiled {
            pcre2_code_free_8(compiled)
            return nil
        }
        let sharedWithECMA: Set<Int32> = [
            PCRE2_ERROR_CLASS_RANGE_ORDER, PCRE2_ERROR_CLASS_INVALID_RANGE, PCRE2_ERROR_BAD_SUBPATTERN_REFERENCE,
            PCRE2_ERROR_DUPLICATE_SUBPATTERN_NAME, PCRE2_ERROR_CODE_POINT_TOO_BIG,
        ]
        return sharedWithECMA.contains(errorCode) ? PatternError(message: message(errorCode), offset: errorOffset) : nil
    }

    deinit {
        pcre2_match_context_free_8(context)
        pcre2_match_data_free_8(matchData)
        pcre2_code_free_8(code)
    }

    /// Searches `subject` (UTF-8 bytes) for a match anywhere in it.
    public func search(_ subject: UnsafeRawBufferPointer) -> Outcome {
        let result = pcre2_match_8(
            code, subject.baseAddress?.assumingMemoryBound(to: UInt8.self), subject.count, 0, 0, matchData, context)
        switch result {
        case let count where count >= 0: return .match
        case PCRE2_ERROR_NOMATCH: return .noMatch
        case PCRE2_ERROR_MATCHLIMIT, PCRE2_ERROR_DEPTHLIMIT, PCRE2_ERROR_JIT_STACKLIMIT, PCRE2_ERROR_HEAPLIMIT:
            return .limitExceeded
        default:
            return .invalidSubject
        }
    }

    /// Searches a string.
    public func search(_ subject: String) -> Outcome {
        var subject = subject
        return subject.withUTF8 { search(UnsafeRawBufferPointer($0)) }
    }

    /// ECMA-262 writes Unicode properties with long names (`\p{Letter}`, `\p{Script=Greek}`,
    /// `\p{gc=Lu}`); PCRE2 takes the short general categories and bare script names.
    static func translatingPropertyNames(_ source: String) -> String {
        guard source.contains("\\p{") || source.contains("\\P{") else { return source }
        var out = ""
        var rest = Substring(source)
        while let range = rest.firstRange(of: "{"), range.lowerBound > rest.startIndex {
            let before = rest[..<range.lowerBound]
            out += before
            rest = rest[range.lowerBound...]
            guard before.hasSuffix("\\p") || before.hasSuffix("\\P"), let close = rest.firstIndex(of: "}") else {
                out += "{"
                rest = rest.dropFirst()
                continue
            }
            var name = String(rest[rest.index(after: rest.startIndex)..<close])
            for prefix in ["General_Category=", "gc=", "Script=", "sc=", "Script_Extensions=", "scx="]
            where name.hasPrefix(prefix) {
                name = String(name.dropFirst(prefix.count))
            }
            out += "{" + (longCategories[name] ?? name) + "}"
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }

    private static let longCategories: [String: String] = [
        "Letter": "L", "Cased_Letter": "L&", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll",
        "Titlecase_Letter": "Lt", "Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M",
        "Nonspacing_Mark": "Mn", "Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N",
        "Decimal_Number": "Nd", "digit": "Nd", "Letter_Number": "Nl", "Other_Number": "No", "Punctuation": "P",
        "punct": "P", "Connector_Punctuation": "Pc", "Dash_Punctuation": "Pd", "Open_Punctuation": "Ps",
        "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi", "Final_Punctuation": "Pf",
        "Other_Punctuation": "Po", "Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc",
        "Modifier_Symbol": "Sk", "Other_Symbol": "So", "Separator": "Z", "Space_Separator": "Zs",
        "Line_Separator": "Zl", "Paragraph_Separator": "Zp", "Other": "C", "Control": "Cc", "cntrl": "Cc",
        "Format": "Cf", "Surrogate": "Cs", "Private_Use": "Co", "Unassigned": "Cn",
    ]

    static func message(_ code: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = pcre2_get_error_message_8(code, &buffer, buffer.count)
        return length > 0 ? String(decoding: buffer[0..<Int(length)], as: UTF8.self) : "error \(code)"
    }
}

/// A pattern that does not compile: PCRE2's words and where in the pattern (a byte offset).
public struct PatternError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var offset: Int
    public var description: String { "\(message) at offset \(offset)" }
}
