import CIDN2

/// Internationalised domain names by IDNA2008 (RFC 5890–5893), through GNU libidn2: whether a
/// label is a valid U-label (code points PVALID or allowed in context, NFC, Bidi, CONTEXTJ), and
/// the Unicode form of an A-label (`xn--…`).
///
/// libidn2 leaves the CONTEXTO rules of RFC 5892 Appendix A (MIDDLE DOT, Greek KERAIA, Hebrew
/// GERESH and GERSHAYIM, KATAKANA MIDDLE DOT, Arabic-Indic digits) and the Bidi rule across the
/// labels of a name to the caller; the contract engine's formats apply them.
public enum IDNA {
    /// The ASCII form (an A-label, or the label itself when it is an LDH label) of `label` (one
    /// label, no dots), or `nil` when it is not valid under IDNA2008 lookup rules. No UTS 46
    /// mapping: what is written must already be in its final form.
    /// - Parameters:
    ///   - normalizing: put the label in Unicode NFC first (`false` by default: a U-label that is
    ///     not in NFC is invalid).
    public static func lookup(_ label: String, normalizing: Bool = false) -> String? {
        guard !label.isEmpty else { return nil }
        var output: UnsafeMutablePointer<UInt8>?
        var flags = Int32(IDN2_NO_TR46.rawValue) | Int32(IDN2_ALABEL_ROUNDTRIP.rawValue)
        if normalizing { flags |= Int32(IDN2_NFC_INPUT.rawValue) }
        let status = label.withCString { text in
            text.withMemoryRebound(to: UInt8.self, capacity: label.utf8.count + 1) {
                idn2_lookup_u8($0, &output, flags)
            }
        }
        guard let output else { return nil }
        defer { idn2_free(output) }
        return status == Int32(IDN2_OK.rawValue) ? String(cString: output) : nil
    }

    /// Whether `label` is valid under IDNA2008 lookup rules (``lookup(_:normalizing:)``).
    public static func isValidLabel(_ label: String, normalizing: Bool = false) -> Bool {
        lookup(label, normalizing: normalizing) != nil
    }

    /// The U-label an A-label (`xn--…`, any case) stands for, or `nil` when its Punycode does not
    /// decode.
    public static func decode(aLabel label: String) -> String? {
        var output: UnsafeMutablePointer<CChar>?
        let status = label.withCString { idn2_to_unicode_8z8z($0, &output, 0) }
        guard status == Int32(IDN2_OK.rawValue), let output else {
            if let output { idn2_free(output) }
            return nil
        }
        defer { idn2_free(output) }
        return String(cString: output)
    }
}
