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

    /// Where ``append(name:value:)`` composes a line before libcurl copies it (reused).
    private var scratch: [CChar] = []

    /// Appends one `"Name: value"` line; `"Name:"` removes a header libcurl would add itself.
    public func append(_ line: String) {
        if let grown = line.withCString({ curl_slist_append(list, $0) }) { list = grown }
    }

    /// Appends `name: value` (`name;` for an empty value, libcurl's spelling of one), composed in
    /// a reused buffer rather than a new string per line.
    public func append(name: String, value: String) {
        scratch.removeAll(keepingCapacity: true)
        for byte in name.utf8 { scratch.append(CChar(bitPattern: byte)) }
        if value.isEmpty {
            scratch.append(0x3B)
        } else {
            scratch.append(0x3A)
            scratch.append(0x20)
            for byte in value.utf8 { scratch.append(CChar(bitPattern: byte)) }
        }
        scratch.append(0)
        if let grown = scratch.withUnsafeBufferPointer({ curl_slist_append(list, $0.baseAddress) }) { list = grown }
    }

    deinit { curl_slist_free_all(list) }
}
