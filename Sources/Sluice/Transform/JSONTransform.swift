/// What delivery does to an exchange's JSON response body: a rule's `rewrite.response.json_patch`
/// first (on the origin's paths), then null stripping. Both hold the body, bounded by
/// `limits.max_transform_body`.
struct JSONTransform: Sendable, Equatable {
    /// `strip_json_nulls` (or `Sluice-Strip-Nulls`) in force.
    let strip: NullStripper.Mode?
    /// The rule's JSON Patch.
    let patch: JSONPatch?

    /// `nil` when there is nothing to do.
    init?(strip: NullStripper.Mode?, patch: JSONPatch? = nil) {
        guard strip != nil || patch != nil else { return nil }
        self.strip = strip
        self.patch = patch
    }
}
