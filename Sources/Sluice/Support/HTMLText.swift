/// Text made safe for HTML and XML (the onboarding page, the profiles it serves, reports that CI
/// renders as HTML).
public enum HTMLText {
    /// `&`, `<`, `>`, `"` and `'` as entities.
    public static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
