import EventIO
import Logging
import Redis

#if canImport(Glibc)
    import Glibc
#endif

/// The shared tier's entries: looked up (at most `timeout`), stored with their lifetime, and
/// indexed by host for host purges.
extension SharedTier {
    // MARK: - Reading

    /// The record stored for `key`, or `nil` (none, not whole, the tier out or too slow): at
    /// most `timeout` later, always on a later loop turn.
    func lookup(_ key: String, completion: @escaping (SharedRecord?) -> Void) {
        guard isAvailable, let backend else {
            loop.callSoon { completion(nil) }
            return
        }
        counts.lookups += 1
        let limit = settings.timeout
        let awaited = AwaitedReply(loop: loop, milliseconds: limit) { [weak self] in
            self?.failed("a lookup took longer than \(limit) ms")
            completion(nil)
        }
        let redisKey = SharedRecord.redisKey(prefix: settings.prefix, key: key)
        let sent = backend.send(key: redisKey, [Array("GET".utf8), redisKey]) { [weak self] reply in
            guard awaited.settle(), let self else { return }
            switch reply {
            case .string(let value)?:
                self.breaker.succeeded()
                guard let record = SharedRecord(decoding: value), record.key == key else {
                    // Torn, foreign or of another version: never served, and removed.
                    self.logger.notice("shared cache tier: an entry for \(key) did not check out; removed")
                    backend.send(key: redisKey, [Array("DEL".utf8), redisKey]) { _ in }
                    return completion(nil)
                }
                self.counts.hits += 1
                completion(record)
            case .null?:
                self.breaker.succeeded()
                completion(nil)
            case .error(let text)? where text.hasPrefix("WRONGTYPE"):
                // Another kind of value under the entry's name (not Sluice's): a foreign value,
                // not a failing server; removed as a torn one is.
                self.breaker.succeeded()
                self.logger.notice("shared cache tier: the key for \(key) held another type of value; removed")
                backend.send(key: redisKey, [Array("DEL".utf8), redisKey]) { _ in }
                completion(nil)
            case .error(let text)?:
                self.failed(text)
                completion(nil)
            default:
                // No answer: the connection was lost (unless `failed` is closing it already).
                if self.backend != nil { self.failed("the connection was lost") }
                completion(nil)
            }
        }
        if !sent, awaited.settle() {
            failed("a command could not be sent")
            loop.callSoon { completion(nil) }
        }
    }

    // MARK: - Writing

    /// Stores a record for `seconds` (its freshness lifetime and stale windows); pipelined,
    /// unanswered by the caller. The host index lets a host's entries be purged everywhere.
    func store(_ record: SharedRecord, seconds: Int64) {
        guard isAvailable, let backend, seconds > 0, Int64(record.body.count) <= settings.maxEntry else { return }
        counts.stores += 1
        let redisKey = SharedRecord.redisKey(prefix: settings.prefix, key: record.key)
        let set = [Array("SET".utf8), redisKey, record.encoded(), Array("EX".utf8), Array(String(seconds).utf8)]
        backend.send(key: redisKey, set) { [weak self] reply in
            guard case .error(let text)? = reply, let self else { return }
            // A full server (maxmemory, noeviction) refuses writes and still answers reads: no
            // failure of the tier, said (once a minute) and counted. (A read-only replica, after a
            // failover, is one: the reconnect finds the new master.)
            if text.hasPrefix("OOM") { return self.refusedStore(text) }
            self.failed(text)
        }
        // The host index (for host purges) as a sorted set of entry names by when they expire:
        // each store drops the ones gone by, so it holds what lives and no more.
        let index = hostIndex(record.host)
        let now = Int64(time(nil))
        backend.send(key: index, [Array("ZADD".utf8), index, Array(String(now + seconds).utf8), redisKey]) { _ in }
        // Gone by a minute ago (instances' clocks may differ by a little).
        let past = Array(String(now - 60).utf8)
        backend.send(key: index, [Array("ZREMRANGEBYSCORE".utf8), index, Array("-inf".utf8), past]) { _ in }
        // The index lives as long as its longest-lived entry: only ever lengthened (GT, Redis 7;
        // older servers refuse GT and get a day at least).
        let lifetime = Array(String(seconds + 60).utf8)
        backend.send(key: index, [Array("EXPIRE".utf8), index, lifetime, Array("GT".utf8)]) { reply in
            if case .integer(0)? = reply {
                // No expiry yet (a new index): GT never sets one.
                backend.send(key: index, [Array("EXPIRE".utf8), index, lifetime, Array("NX".utf8)]) { _ in }
            } else if case .error? = reply {
                let day = Array(String(max(seconds + 60, 86_400)).utf8)
                backend.send(key: index, [Array("EXPIRE".utf8), index, day]) { _ in }
            }
        }
    }

    func refusedStore(_ reason: String) {
        refusedStores = (refusedStores.count + 1, reason)
        let now = Double(EventLoop.monotonicNanoseconds()) / 1e9
        guard lastRefusalLog == 0 || now - lastRefusalLog >= 60 else { return }
        lastRefusalLog = now
        logger.warning(
            "shared cache tier \(description) refuses to store (\(reason)); entries are not shared until it takes them (said once a minute)"
        )
    }

    /// A host's index of entry names (a sorted set; `host:` named the set earlier versions kept).
    func hostIndex(_ host: String) -> [UInt8] { Array((settings.prefix + "hosts:" + host.lowercased()).utf8) }
    func olderHostIndex(_ host: String) -> [UInt8] {
        Array((settings.prefix + "host:" + host.lowercased()).utf8)
    }
}
