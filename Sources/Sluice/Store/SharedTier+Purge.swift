import EventIO
import Logging
import Redis

extension SharedTier {
    /// What a purge does in the shared tier: the entries go, and every instance hears of it.
    /// `keys`: the URL keys a `keyOrURL` purge named (read from the local file before it purged).
    func purge(_ selector: CacheInspector.Selector, keys: [String]) {
        switch selector {
        case .all: purgeAll()
        case .host(let host): purge(host: host)
        case .urlGlob(let glob): purgeAll(announcing: .glob(glob))
        case .keyOrURL: for key in Set(keys) { invalidate(key: key) }
        }
    }

    /// The same, for a caller that waits: `done(nil)` once the tier confirmed every deletion,
    /// else with why not (the command line: nothing keeps its purge for a reconnect).
    func purge(_ selector: CacheInspector.Selector, keys: [String], done: @escaping (String?) -> Void) {
        guard let backend, isAvailable else { return done("the tier is out") }
        switch selector {
        case .all, .urlGlob:
            removeAll(backend, done: done)
            if case .urlGlob(let glob) = selector { announce(.glob(glob)) } else { announce(.all) }
        case .host(let host):
            removeHost(host, backend, done: done)
            announce("host", host)
        case .keyOrURL:
            let group = Deletions(done)
            for key in Set(keys) {
                group.delete(SharedRecord.redisKey(prefix: settings.prefix, key: key), on: backend)
                announce("key", key)
            }
            group.allSent()
        }
    }

    /// `sluice cache purge` (another process than the proxies): the same purge in the shared tier
    /// and the same announcement. Returns why it could not, or `nil` when the tier confirmed
    /// every command.
    public static func purgeFromCommandLine(
        _ selector: CacheInspector.Selector, keys: [String], settings: Configuration.Cache.SharedTier,
        logger: Logger, timeout: Int = 3000
    ) -> String? {
        onCommandLine(settings: settings, logger: logger, timeout: timeout) { tier, finish in
            tier.purge(selector, keys: keys) { failure in
                // (The announcements too: answered before the flush's PING.)
                tier.flush { confirmed in
                    finish(failure ?? (confirmed ? nil : "the shared tier went away before it confirmed the purge"))
                }
            }
        }
    }
}

extension SharedTier {
    /// Carries out what was purged or invalidated while the tier was out.
    func replayPending() {
        guard let backend else { return }
        let work = pending.take()
        // Lookups wait until what the purges remove is gone: a key's DEL goes ahead of any GET on
        // its connection, but a host's or every entry's names come back first (ZRANGE, SCAN).
        // What does not get through waits for the next reconnect.
        switch work {
        case .none: return
        case .everything(let announcement):
            replaying += 1
            let keep = keptUnlessConfirmed { $0.addEverything(announcement) }
            removeAll(backend) { [weak self] failure in
                self?.replaying -= 1
                keep(failure)
            }
            announce(announcement)
        case .some(let keys, let hosts):
            for host in hosts {
                replaying += 1
                let keep = keptUnlessConfirmed { $0.add(host: host) }
                removeHost(host, backend) { [weak self] failure in
                    self?.replaying -= 1
                    keep(failure)
                }
                announce("host", host)
            }
            for key in keys {
                removeKey(key, backend)
                announce("key", key)
            }
        }
        logger.notice("shared cache tier \(description): purges made while it was out carried out")
    }

    // MARK: - Purges and invalidation

    /// Removes `key` from the tier and tells the other instances to drop their copies (on the
    /// reconnect, when the tier is out now).
    func invalidate(key: String) {
        guard let backend, isAvailable else { return pending.add(key: key) }
        removeKey(key, backend)
        announce("key", key)
    }

    /// Deletes one key's entry; a deletion the server does not confirm (an error such as a
    /// Cluster's `CLUSTERDOWN`, or no answer) is kept for the next reconnect and counts as a
    /// failure (three take the tier out, and the reconnect carries it out).
    private func removeKey(_ key: String, _ backend: Backend) {
        let group = Deletions(keptUnlessConfirmed { $0.add(key: key) })
        group.delete(SharedRecord.redisKey(prefix: settings.prefix, key: key), on: backend)
        group.allSent()
    }

    /// Removes a host's entries (through the host index) and announces it.
    func purge(host: String) {
        guard let backend, isAvailable else { return pending.add(host: host) }
        removeHost(host, backend, done: keptUnlessConfirmed { $0.add(host: host) })
        announce("host", host)
    }

    /// The `done` of deletions whose work, unless the tier confirmed it, is kept (`keep` puts it
    /// back in ``pending``) for the reconnect and counts as a failure.
    private func keptUnlessConfirmed(_ keep: @escaping (inout PendingPurges) -> Void) -> (String?) -> Void {
        { [weak self] failure in
            guard let self, let failure else { return }
            keep(&self.pending)
            self.logger.debug("shared cache tier: a deletion was not confirmed (\(failure)); kept for the reconnect")
            self.failed(failure)
        }
    }

    /// Deletes a host's entries (its index, and the set earlier versions kept); `done(nil)` once
    /// every deletion is confirmed, else with why not.
    func removeHost(_ host: String, _ backend: Backend, done: @escaping (String?) -> Void) {
        let group = Deletions(done)
        var lists = 2
        func reply(_ name: [UInt8], _ reply: RedisConnection.Reply?) {
            switch reply {
            case .array(let members)?:
                for case .string(let member) in members { group.delete(member, on: backend) }
                group.delete(name, on: backend)
            case .error(let text)? where text.hasPrefix("WRONGTYPE"): break  // (not a list of ours)
            case .error(let text)?: group.failed(text)
            default: group.failed("the connection was lost")
            }
            lists -= 1
            if lists == 0 { group.allSent() }
        }
        let index = hostIndex(host)
        let older = olderHostIndex(host)
        if !backend.send(
            key: index, [Array("ZRANGE".utf8), index, Array("0".utf8), Array("-1".utf8)],
            reply: {
                reply(index, $0)
            })
        {
            reply(index, nil)
        }
        if !backend.send(key: older, [Array("SMEMBERS".utf8), older], reply: { reply(older, $0) }) {
            reply(older, nil)
        }
    }

    /// Removes every entry of this prefix (a URL glob cannot be matched in the tier, so a glob
    /// purge empties it too; over-purging only costs misses) and announces what was purged.
    func purgeAll(announcing announcement: Announcement = .all) {
        guard let backend, isAvailable else { return pending.addEverything(announcement) }
        removeAll(backend, done: keptUnlessConfirmed { $0.addEverything(announcement) })
        announce(announcement)
    }

    /// Unlinks every entry of this prefix on every server (one by one: in a Cluster each key may
    /// live in another slot); `done(nil)` once every unlink is confirmed, else with why not.
    func removeAll(_ backend: Backend, done: @escaping (String?) -> Void) {
        let group = Deletions(done)
        let servers = backend.servers
        var scanning = servers.count
        guard scanning > 0 else {
            group.failed("no server to ask")
            return group.allSent()
        }
        for server in servers {
            scan(settings.prefix + "*", on: server, backend: backend) { names in
                for name in names { group.delete(name, on: backend, command: "UNLINK") }
            } done: { finished in
                if !finished { group.failed("a SCAN page did not come") }
                scanning -= 1
                if scanning == 0 { group.allSent() }
            }
        }
    }

    func announce(_ announcement: Announcement) {
        switch announcement {
        case .glob(let glob): announce("glob", glob)
        default: announce("all", "")
        }
    }
}

/// Deletions sent as a group (a key, a host's entries, every entry): `done(nil)` once every one
/// was confirmed and nothing more is to be sent (``allSent()``), else `done` with the first
/// reason one was not (an error, a lost connection). Called once.
final class Deletions {
    private var outstanding = 0
    private var sending = true
    private var failure: String?
    private var done: ((String?) -> Void)?

    init(_ done: @escaping (String?) -> Void) { self.done = done }

    func delete(_ name: [UInt8], on backend: SharedTier.Backend, command: String = "DEL") {
        outstanding += 1
        let sent = backend.send(key: name, [Array(command.utf8), name]) { [self] reply in
            switch reply {
            case .error(let text)?: failed(text)
            case nil: failed("the connection was lost")
            default: break
            }
            outstanding -= 1
            finishIfDone()
        }
        if !sent {
            failed("the connection was lost")
            outstanding -= 1
        }
    }

    func failed(_ reason: String) { if failure == nil { failure = reason } }

    func allSent() {
        sending = false
        finishIfDone()
    }

    private func finishIfDone() {
        guard !sending, outstanding == 0, let done else { return }
        self.done = nil
        done(failure)
    }
}
