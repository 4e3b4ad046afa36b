/// Which TLS clients get blind tunnels instead of interception, and why: a client that refuses
/// Sluice's certificate twice within a minute (an app that pins, or one that does not trust the
/// CA) gets them for `tls.passthrough_after_failure`, keyed by its address, the host and its TLS
/// fingerprint, so the other apps on the same address are still intercepted. A client that
/// completed a handshake with the same fingerprint for that host within the window is not
/// pinning (a browser or a load generator that cut a few handshakes short when it stopped): its
/// refusals never start one. Pure: every decision takes `now` (monotonic seconds).
struct PassthroughBook {
    /// Who refused what.
    struct Key: Hashable {
        /// The client's address, without its port.
        let client: String
        /// The host, lowercased, without an IPv6 literal's brackets.
        let host: String
        /// The client's JA4 fingerprint.
        let fingerprint: String
    }

    /// A blind window.
    struct Entry: Equatable {
        let key: Key
        let since: Double
        let until: Double
    }

    /// What a refusal did.
    enum Outcome: Equatable {
        /// Passthrough is off (`tls.passthrough_after_failure: 0`).
        case off
        /// Counted: this many refusals in the last minute, fewer than start a window.
        case counted(Int)
        /// The same client completed a handshake for the host within the window: not pinning.
        case trustedRecently
        /// Blind until then.
        case started(until: Double)
    }

    /// How long a window lasts, in seconds; 0 = never start one.
    let window: Double
    /// Refusals within this many seconds count together.
    static let refusalSpan = 60.0
    /// Refusals that start a window.
    static let refusalsToStart = 2
    /// The most keys remembered (older ones are forgotten first).
    static let capacity = 10_000

    private var refusals: [Key: [Double]] = [:]
    private var completed: [Key: Double] = [:]
    private var blind: [Key: Entry] = [:]

    init(window: Double) { self.window = window }

    /// A client refused the certificate.
    mutating func refused(_ key: Key, now: Double) -> Outcome {
        guard window > 0 else { return .off }
        var times = (refusals[key] ?? []).filter { now - $0 < Self.refusalSpan }
        times.append(now)
        refusals[key] = times
        prune(now: now)
        if let last = completed[key], now - last < max(window, Self.refusalSpan) { return .trustedRecently }
        guard times.count >= Self.refusalsToStart else { return .counted(times.count) }
        refusals[key] = nil
        let entry = Entry(key: key, since: now, until: now + window)
        blind = blind.filter { now < $0.value.until }  // ended windows go as new ones start
        blind[key] = entry
        return .started(until: entry.until)
    }

    /// A client completed a handshake (it trusts the CA).
    mutating func completedHandshake(_ key: Key, now: Double) {
        completed[key] = now
        refusals[key] = nil
        prune(now: now)
    }

    /// Whether the client's tunnels to the host are blind now.
    func isBlind(_ key: Key, now: Double) -> Bool { blind[key].map { now < $0.until } ?? false }

    /// The windows in force, soonest to end first.
    func entries(now: Double) -> [Entry] {
        blind.values.filter { now < $0.until }.sorted { ($0.until, $0.key.host) < ($1.until, $1.key.host) }
    }

    /// Ends the windows for `host` (every window when `nil`); how many ended.
    mutating func clear(host: String?) -> Int {
        let ending = blind.keys.filter { key in host.map { key.host == $0.lowercased() } ?? true }
        for key in ending { blind[key] = nil }
        return ending.count
    }

    /// Ends `client`'s windows and forgets its refusals (it was just given the CA: the refusals
    /// were from before it trusted it); how many windows ended.
    mutating func clear(client: String) -> Int {
        let ending = blind.keys.filter { $0.client == client }
        for key in ending { blind[key] = nil }
        refusals = refusals.filter { $0.key.client != client }
        return ending.count
    }

    /// Forgets what is too old to matter, and the oldest when too much is remembered.
    private mutating func prune(now: Double) {
        guard refusals.count + completed.count + blind.count > Self.capacity else { return }
        refusals = refusals.filter { now - ($0.value.last ?? 0) < Self.refusalSpan }
        completed = completed.filter { now - $0.value < max(window, Self.refusalSpan) }
        blind = blind.filter { now < $0.value.until }
        if refusals.count > Self.capacity / 2 { refusals = [:] }
        if completed.count > Self.capacity / 2 { completed = [:] }
    }
}
