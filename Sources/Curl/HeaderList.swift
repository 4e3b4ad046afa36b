import CCurl

/// Owns a `curl_slist` of header lines for as long as a handle uses it.
/// - SeeAlso: `curl_slist_append(3)`, `CURLOPT_HTTPHEADER`.
public final class HeaderList {
    private(set) var list: UnsafeMutablePointer<curl_slist>?

    /// An empty list.
    public init() {}

    /// A list of `"Name: value"` lines (libcurl copies each string).
    public convenience init(_ lines: [String]) {
        self.init()
        for line in lines { append(line) }
    }

    /// Appends one `"Name: value"` line; `"Name:"` removes a header libcurl would add itself.
    public func append(_ line: String) {
        if let grown = line.withCString({ curl_slist_append(list, $0) }) { list = grown }
    }

    /// Appends `name: value` (`name;` for an empty value, libcurl's spelling of one), composed in
    /// temporary (stack) memory rather than a new string per line.
    public func append(name: String, value: String) {
        var name = name
        var value = value
        let nameCount = name.utf8.count
        let valueCount = value.utf8.count
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: nameCount + valueCount + 3) { line in
            let base = line.baseAddress!
            name.withUTF8 { if let bytes = $0.baseAddress { base.update(from: bytes, count: nameCount) } }
            var end = nameCount
            if valueCount == 0 {
                base[end] = 0x3B
                end += 1
            } else {
                base[end] = 0x3A
                base[end + 1] = 0x20
                end += 2
                value.withUTF8 { if let bytes = $0.baseAddress { (base + end).update(from: bytes, count: valueCount) } }
                end += valueCount
            }
            base[end] = 0
            let grown = UnsafeRawPointer(base).withMemoryRebound(to: CChar.self, capacity: end + 1) {
                curl_slist_append(list, $0)
            }
            if let grown { list = grown }
        }
    }

    /// Appends one line given as bytes (`"Name: value"`, the value perhaps not UTF-8).
    public func append(bytes line: [UInt8]) {
        var terminated = line
        terminated.append(0)
        let grown = terminated.withUnsafeBufferPointer { bytes in
            UnsafeRawPointer(bytes.baseAddress!).withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                curl_slist_append(list, $0)
            }
        }
        if let grown { list = grown }
    }

    deinit { curl_slist_free_all(list) }
}
