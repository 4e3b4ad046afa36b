import CCurl

/// A parent proxy for the transfer, and what it answered.
extension EasyHandle {
    /// Sends the transfer through a parent proxy (`http://`, `https://`, `socks5h://`, with
    /// credentials in the URL): absolute-form requests for `http://` targets, a CONNECT tunnel
    /// for `https://` ones. The URL is never logged.
    public func setProxy(_ url: String) {
        _ = url.withCString { sluice_easy_setopt_string(handle, CURLOPT_PROXY, $0) }
        sluice_easy_setopt_string(handle, CURLOPT_NOPROXY, "")
        hasProxy = true
    }

    /// Checks an `https://` parent's certificate against the PEM CA certificates in `path`
    /// instead of the system store. - SeeAlso: `CURLOPT_PROXY_CAINFO`.
    public func setProxyCAFile(_ path: String) {
        _ = path.withCString { sluice_easy_setopt_string(handle, CURLOPT_PROXY_CAINFO, $0) }
    }

    /// The verdict on an `https://` parent's certificate: 0 when it passed or was not checked,
    /// otherwise OpenSSL's `X509_V_ERR_…` code. - SeeAlso: `CURLINFO_PROXY_SSL_VERIFYRESULT`.
    public var proxyVerifyResult: Int {
        var result = 0
        sluice_easy_getinfo_long(handle, CURLINFO_PROXY_SSL_VERIFYRESULT, &result)
        return result
    }

    /// The status a parent proxy answered the CONNECT with (0: none was sent).
    public var proxyConnectCode: Int {
        var code = 0
        sluice_easy_getinfo_long(handle, CURLINFO_HTTP_CONNECTCODE, &code)
        return code
    }
}
