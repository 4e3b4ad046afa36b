/// A rule's `cache:` block as a will-cache hook: refuse storing, or give responses without
/// freshness information of their own a lifetime (Squid's `refresh_pattern`).
struct RuleCacher: CachedResponseHandler {
    let rule: String
    let settings: CacheRule

    func task(_ task: UpstreamTask, willCache proposal: CachedResponseProposal) -> CachedResponseProposal? {
        guard settings.store else { return nil }
        guard let ttl = settings.ttl, proposal.lifetime == nil,
            !CachePolicy.hasExplicitFreshness(proposal.response.headers)
        else { return proposal }
        var changed = proposal
        changed.lifetime = ttl
        return changed
    }
}
