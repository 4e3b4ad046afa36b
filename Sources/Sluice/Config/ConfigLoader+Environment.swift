#if canImport(Glibc)
    import Glibc
#endif

extension ConfigLoader {
    /// `${NAME}` replaced by the environment variable's value (credentials kept out of the
    /// file); an unset variable is an error that names it, never an empty credential.
    static func substitutingEnvironment(
        _ text: String, at value: Value, lookup: (String) -> String? = { getenv($0).map { String(cString: $0) } }
    ) throws(ConfigError) -> String {
        guard text.contains("${") else { return text }
        var out = ""
        var rest = Substring(text)
        while let start = rest.firstIndex(of: "$") {
            out += rest[..<start]
            let after = rest[rest.index(after: start)...]
            guard after.hasPrefix("{"), let close = after.firstIndex(of: "}") else {
                out += "$"
                rest = after
                continue
            }
            let name = String(after[after.index(after: after.startIndex)..<close])
            guard !name.isEmpty, let replacement = lookup(name) else {
                throw value.fail("${\(name)} is not set in the environment")
            }
            out += replacement
            rest = after[after.index(after: close)...]
        }
        return out + rest
    }
}
