import EventIO

/// A Redis Cluster on an ``EventLoop``: the slot map read with `CLUSTER SLOTS` from a seed,
/// one ``RedisConnection`` per master, each command sent to the master of its key's slot (the
/// CRC16 of the key, or of its `{hash tag}`, mod 16384), a `-MOVED` reply followed (and the map
/// read again), an `-ASK` reply followed once with `ASKING`. Loop-confined.
public final class RedisCluster {
    public static let slotCount = 16384

    private let loop: EventLoop
    private let seeds: [(host: String, port: UInt16)]
    private let credentials: RedisConnection.Credentials?
    /// The master of each slot, as `host:port` (empty until the map is read).
    private var slots = [String](repeating: "", count: RedisCluster.slotCount)
    private var nodes: [String: RedisConnection] = [:]
    private let onStateChange: (RedisConnection.State) -> Void
    public private(set) var state = RedisConnection.State.connecting
    private var refreshing = false

    /// Connects to the first seed, reads the slot map, and reports `.connected` (or `.closed`).
    public init(
        loop: EventLoop, seeds: [(host: String, port: UInt16)], credentials: RedisConnection.Credentials? = nil,
        onStateChange: @escaping (RedisConnection.State) -> Void
    ) {
        self.loop = loop
        self.seeds = seeds
        self.credentials = credentials
        self.onStateChange = onStateChange
        refreshMap()
    }

    deinit { close() }

    public func close() {
        for node in nodes.values { node.close() }
        nodes.removeAll()
        if case .closed = state {} else { state = .closed("closed") }
    }

    private func changed(_ new: RedisConnection.State) {
        guard state != new else { return }
        if case .closed = state { return }
        state = new
        onStateChange(new)
    }

    /// The connection to `host:port`, made when first needed; a node that closes fails the cluster
    /// (its owner reconnects everything, with its own backoff).
    private func node(_ address: String) -> RedisConnection? {
        if let node = nodes[address] {
            if case .closed = node.state {} else { return node }
        }
        guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
            return nil
        }
        let node = RedisConnection(loop: loop, host: String(address[..<colon]), port: port, credentials: credentials) {
            [weak self] state in
            if case .closed(let reason) = state { self?.changed(.closed("\(address): \(reason)")) }
        }
        nodes[address] = node
        return node
    }

    /// Reads the slot map from a node (a seed at first).
    private func refreshMap() {
        guard !refreshing else { return }
        refreshing = true
        let known = nodes.keys.first ?? seeds.first.map { "\($0.host):\($0.port)" } ?? ""
        guard let node = node(known) else {
            refreshing = false
            return changed(.closed("no seed"))
        }
        node.send([Array("CLUSTER".utf8), Array("SLOTS".utf8)]) { [weak self] reply in
            guard let self else { return }
            self.refreshing = false
            guard case .array(let ranges)? = reply else {
                return self.changed(.closed("CLUSTER SLOTS failed: \(reply.map { "\($0)" } ?? "no answer")"))
            }
            for case .array(let range) in ranges where range.count >= 3 {
                guard case .integer(let first) = range[0], case .integer(let last) = range[1],
                    case .array(let master) = range[2], master.count >= 2, let host = master[0].text,
                    case .integer(let port) = master[1], first >= 0, last < RedisCluster.slotCount, first <= last
                else { continue }
                for slot in Int(first)...Int(last) { self.slots[slot] = "\(host):\(port)" }
            }
            self.changed(.connected)
        }
    }

    /// The slot of a key: CRC16 (XMODEM) of its hash tag's content when it has one, else of the key.
    public static func slot(of key: [UInt8]) -> Int {
        var part = key[...]
        if let open = key.firstIndex(of: UInt8(ascii: "{")),
            let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1
        {
            part = key[(open + 1)..<close]
        }
        var crc: UInt16 = 0
        for byte in part {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return Int(crc) % slotCount
    }

    /// Sends a command about `key` to its slot's master; follows one MOVED or ASK.
    @discardableResult
    public func send(key: [UInt8], _ arguments: [[UInt8]], reply: @escaping (RedisConnection.Reply?) -> Void) -> Bool {
        let address = slots[RedisCluster.slot(of: key)]
        guard !address.isEmpty, let node = node(address) else { return false }
        return node.send(arguments) { [weak self] answer in
            guard let self, case .error(let text)? = answer else { return reply(answer) }
            let parts = text.split(separator: " ")
            guard parts.count == 3, parts[0] == "MOVED" || parts[0] == "ASK", let slot = Int(parts[1]),
                (0..<RedisCluster.slotCount).contains(slot), let target = self.node(String(parts[2]))
            else { return reply(answer) }
            if parts[0] == "MOVED" {
                self.slots[slot] = String(parts[2])
                self.refreshMap()
                target.send(arguments, reply: reply)
            } else {
                target.send([Array("ASKING".utf8)]) { _ in }
                target.send(arguments, reply: reply)
            }
        }
    }

    /// Sends a command to any one master (PUBLISH, PING).
    @discardableResult
    public func sendToAny(_ arguments: [[UInt8]], reply: @escaping (RedisConnection.Reply?) -> Void) -> Bool {
        guard let address = slots.first(where: { !$0.isEmpty }), let node = node(address) else { return false }
        return node.send(arguments, reply: reply)
    }

    /// The masters, as `host:port` (for commands every master must run, like SCAN).
    public var masters: [String] { Array(Set(slots.filter { !$0.isEmpty })).sorted() }

    /// Sends a command to one master by address.
    @discardableResult
    public func send(
        toMaster address: String, _ arguments: [[UInt8]], reply: @escaping (RedisConnection.Reply?) -> Void
    )
        -> Bool
    {
        guard let node = node(address) else { return false }
        return node.send(arguments, reply: reply)
    }
}
