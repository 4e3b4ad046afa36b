/// One stored response as the shared tier keeps it: a single Redis value written with one `SET`
/// (so it is there whole or not at all), holding the head, the times it was stored with (so Age
/// and freshness hold across instances) and the body, under a version and a checksum: a value
/// that does not decode and check out whole is never served.
struct SharedRecord: Equatable, KeepsStoredHead {
    /// The head, key and times, as every tier keeps them.
    var stored: StoredHead
    var url: String
    var host: String
    var body: [UInt8]

    static let magic = Array("SLC1".utf8)

    /// The value: magic, FNV-1a-64 of what follows, the fields (each a 32-bit length and its
    /// bytes), then the body.
    func encoded() -> [UInt8] {
        var payload: [UInt8] = []
        let fields = [
            key, variant, varyNames.joined(separator: ","), url, host, String(status), reason,
            CacheStore.encode(headers), String(requestTime), String(responseTime), ttl.map(String.init) ?? "",
        ]
        payload.reserveCapacity(body.count + fields.reduce(0) { $0 + $1.utf8.count + 4 } + 8)
        for field in fields { SharedRecord.append(Array(field.utf8), to: &payload) }
        SharedRecord.append(body, to: &payload)
        var value = SharedRecord.magic
        withUnsafeBytes(of: SharedRecord.checksum(payload).bigEndian) { value.append(contentsOf: $0) }
        return value + payload
    }

    /// `nil` for anything that is not a whole, checked record of this version.
    init?(decoding value: [UInt8]) {
        guard value.count >= 12, Array(value[0..<4]) == SharedRecord.magic else { return nil }
        var sum: UInt64 = 0
        for byte in value[4..<12] { sum = sum << 8 | UInt64(byte) }
        let payload = value[12...]
        guard SharedRecord.checksum(payload) == sum else { return nil }
        var cursor = payload.startIndex
        var parts: [ArraySlice<UInt8>] = []
        while cursor < payload.endIndex {
            guard payload.endIndex - cursor >= 4 else { return nil }
            var length = 0
            for byte in payload[cursor..<(cursor + 4)] { length = length << 8 | Int(byte) }
            cursor += 4
            guard payload.endIndex - cursor >= length else { return nil }
            parts.append(payload[cursor..<(cursor + length)])
            cursor += length
        }
        guard parts.count == 12 else { return nil }
        let text = parts.prefix(11).map { String(decoding: $0, as: UTF8.self) }
        guard let status = Int(text[5]), let requestTime = Double(text[8]), let responseTime = Double(text[9]) else {
            return nil
        }
        stored = StoredHead(
            key: text[0], variant: text[1],
            varyNames: text[2].isEmpty ? [] : text[2].split(separator: ",").map(String.init), status: status,
            reason: text[6], headers: CacheStore.decode(text[7]), requestTime: requestTime,
            responseTime: responseTime, ttl: Int64(text[10]))
        url = text[3]
        host = text[4]
        body = Array(parts[11])
    }

    init(stored: StoredHead, url: String, host: String, body: [UInt8]) {
        self.stored = stored
        self.url = url
        self.host = host
        self.body = body
    }

    init(
        key: String, variant: String, varyNames: [String], url: String, host: String, status: Int, reason: String,
        headers: HTTPFields, requestTime: Double, responseTime: Double, ttl: Int64?, body: [UInt8]
    ) {
        self.init(
            stored: StoredHead(
                key: key, variant: variant, varyNames: varyNames, status: status, reason: reason, headers: headers,
                requestTime: requestTime, responseTime: responseTime, ttl: ttl),
            url: url, host: host, body: body)
    }

    private static func append(_ bytes: [UInt8], to payload: inout [UInt8]) {
        let length = UInt32(bytes.count)
        payload += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        payload += bytes
    }

    static func checksum(_ bytes: some Collection<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash
    }

    /// The Redis key of a cache key: the prefix, then a hash tag (`{…}`, so that everything of
    /// one URL would sit in one Cluster slot), then the kind.
    static func redisKey(prefix: String, key: String) -> [UInt8] {
        Array((prefix + "{" + String(checksum(Array(key.utf8)), radix: 16) + "}:entry").utf8)
    }
}
