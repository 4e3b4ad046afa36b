extension String {
    /// A host as it stands in an authority, without an IPv6 literal's brackets (`[::1]` → `::1`).
    var withoutIPv6Brackets: String { hasPrefix("[") && hasSuffix("]") ? String(dropFirst().dropLast()) : self }
}
