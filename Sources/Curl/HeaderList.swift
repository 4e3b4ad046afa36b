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
        if let grown = curl_slist_append(list, line) { list = grown }
    }

    deinit { curl_slist_free_all(list) }
}
