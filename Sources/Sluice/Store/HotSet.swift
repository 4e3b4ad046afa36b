import EventIO

#if canImport(Glibc)
    import Glibc
#endif

/// A stored body kept whole in memory: a small one as bytes; a larger one in a shared in-memory
/// file, which plain sockets are sent from by the kernel without a copy through user space
/// (zero-copy hits) and which anything else reads in place.
enum HotBody {
    case bytes([UInt8])
    case file(SharedFile)

    /// Bodies of at least this many bytes are kept as files.
    static let fileThreshold = 16 * 1024

    /// Keeps `bytes`, as a file when large enough and `mayUseFile` (as bytes when the system
    /// refuses a file).
    init(_ bytes: [UInt8], mayUseFile: Bool) {
        if mayUseFile, bytes.count >= HotBody.fileThreshold,
            let file = bytes.withUnsafeBytes({ SharedFile(copying: $0, name: "sluice-hot-body") })
        {
            self = .file(file)
        } else {
            self = .bytes(bytes)
        }
    }

    var isFile: Bool { if case .file = self { true } else { false } }

    var count: Int {
        switch self {
        case .bytes(let bytes): bytes.count
        case .file(let file): file.count
        }
    }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch self {
        case .bytes(let bytes): bytes.withUnsafeBytes(body)
        case .file(let file): body(file.bytes)
        }
    }
}

/// The cache's memory tier: the decoded entries of recently used keys and the whole bodies of
/// small ones, so that a hit needs no SQLite query. SQLite stays the truth: every change to a key
/// (store, refresh, invalidation, eviction) drops it here, and a change by another process
/// (`PRAGMA data_version`) drops everything. Bounded by a byte budget, least recently used first.
final class HotSet {
    /// Most bytes kept: an eighth for decoded entries, the rest for bodies; 0 = off.
    let budget: Int
    /// Largest body kept whole.
    let bodyLimit: Int64

    private final class Key {
        var entries: [CacheStore.Entry]
        var lastUse: UInt64
        let bytes: Int
        init(_ entries: [CacheStore.Entry], lastUse: UInt64, bytes: Int) {
            self.entries = entries
            self.lastUse = lastUse
            self.bytes = bytes
        }
    }

    private final class Body {
        let bytes: HotBody
        /// The client head for plain GETs, without Age and Cache-Status and the final CRLF
        /// (see `StoredResponse.plainHead`); made at the second hit, gone with the body.
        var head: [UInt8]?
        var lastUse: UInt64
        init(_ bytes: HotBody, lastUse: UInt64) {
            self.bytes = bytes
            self.lastUse = lastUse
        }

        /// What it counts against the budget.
        var cost: Int { bytes.count + (head?.count ?? 0) + HotSet.bodyOverhead }
    }

    /// Bodies kept as files (each holds a descriptor), at most ``fileLimit``.
    private(set) var files = 0
    /// An eighth of the descriptors the process may open, at most 4096: client connections keep the rest.
    let fileLimit: Int
    private var keys: [String: Key] = [:]
    private var bodies: [EntryRef: Body] = [:]
    private(set) var bodyBytes = 0
    private(set) var entryBytes = 0
    private var tick: UInt64 = 0

    init(budget: Int) {
        self.budget = budget
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        fileLimit = Int(min(4096, limit.rlim_cur / 8))
        bodyLimit = Int64(min(budget / 16, 1 << 20))
    }

    private var entryBudget: Int { budget / 8 }
    /// What a kept body costs beyond its bytes (array header, object, dictionary slot).
    private static let bodyOverhead = 128
    private var bodyBudget: Int { budget - entryBudget }

    /// The complete entries of a key, when known here.
    func entries(_ key: String) -> [CacheStore.Entry]? {
        guard let known = keys[key] else { return nil }
        tick &+= 1
        known.lastUse = tick
        return known.entries
    }

    /// Remembers every complete entry of a key (as just read from the file).
    func remember(_ key: String, _ entries: [CacheStore.Entry]) {
        guard budget > 0 else { return }
        tick &+= 1
        // What the decoded entries cost, roughly: strings and their headers, per field and per entry.
        var bytes = 64 + key.utf8.count
        for entry in entries {
            bytes += 256 + entry.variant.utf8.count
            for field in entry.headers { bytes += 48 + field.name.utf8.count + field.value.utf8.count }
        }
        if let old = keys.updateValue(Key(entries, lastUse: tick, bytes: bytes), forKey: key) {
            entryBytes -= old.bytes
        }
        entryBytes += bytes
        if entryBytes > entryBudget { trimKeys() }
    }

    /// A stored body kept whole.
    func body(_ entry: EntryRef) -> HotBody? {
        guard let known = bodies[entry] else { return nil }
        tick &+= 1
        known.lastUse = tick
        return known.bytes
    }

    /// The kept client head of an entry whose body is kept.
    func head(_ entry: EntryRef) -> [UInt8]? { bodies[entry]?.head }

    /// Keeps a client head next to a kept body (nothing when the body is not kept).
    func keep(head bytes: [UInt8], entry: EntryRef) {
        guard let known = bodies[entry], known.head == nil else { return }
        known.head = bytes
        bodyBytes += bytes.count
    }

    /// Whether a body of this size would be kept.
    func wants(size: Int64) -> Bool { budget > 0 && size <= bodyLimit }

    func keep(body bytes: [UInt8], entry: EntryRef) {
        guard wants(size: Int64(bytes.count)), bodies[entry] == nil else { return }
        tick &+= 1
        let body = Body(HotBody(bytes, mayUseFile: files < fileLimit), lastUse: tick)
        if body.bytes.isFile { files += 1 }
        bodies[entry] = body
        bodyBytes += bytes.count + HotSet.bodyOverhead
        if bodyBytes > bodyBudget { trimBodies() }
    }

    /// A key changed in the file: its entries and bodies are read again next time.
    func forget(_ key: String) {
        guard let known = keys.removeValue(forKey: key) else { return }
        entryBytes -= known.bytes
        for entry in known.entries { forget(entry: entry.ref) }
    }

    /// An entry left the file.
    func forget(entry: EntryRef) {
        if let body = bodies.removeValue(forKey: entry) { dropped(body) }
    }

    private func dropped(_ body: Body) {
        bodyBytes -= body.cost
        if body.bytes.isFile { files -= 1 }
    }

    /// Another process changed the file.
    func forgetAll() {
        keys.removeAll()
        bodies.removeAll()
        files = 0
        bodyBytes = 0
        entryBytes = 0
    }

    /// Down to three quarters of the budget, least recently used first (amortised: runs rarely).
    private func trimBodies() {
        let order = bodies.sorted { $0.value.lastUse < $1.value.lastUse }
        for (id, body) in order where bodyBytes > bodyBudget * 3 / 4 {
            bodies[id] = nil
            dropped(body)
        }
    }

    private func trimKeys() {
        let order = keys.sorted { $0.value.lastUse < $1.value.lastUse }
        for (key, _) in order where entryBytes > entryBudget * 3 / 4 { forget(key) }
    }
}
