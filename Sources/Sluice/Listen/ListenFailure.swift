import EventIO
import Foundation

/// A port Sluice was told to listen on could not be had. The start stops (Squid and nginx refuse
/// to run without their ports too): a proxy half-started, or a page that is another process's,
/// is worse than a clear refusal.
public struct ListenFailure: Error, CustomStringConvertible, Sendable {
    /// The configuration key that names the address (`listen`, `admin.listen`).
    public var key: String
    /// The address as configured.
    public var address: String
    /// `errno` of the failed bind (0 when the address could not be parsed).
    public var code: Int32

    /// A listener other devices could reach, with no `allow_clients` and no `proxy_auth`.
    public var open = false

    /// The refusal to listen on a LAN address without access control.
    static func openProxy(_ address: String) -> ListenFailure {
        var failure = ListenFailure(key: "listen", address: address, code: 0)
        failure.open = true
        return failure
    }

    public var description: String {
        if open {
            return
                "not listening on \(address) (listen): other devices reach it, and nothing says who may use it; add allow_clients: [192.168.1.0/24] (the networks to serve) or proxy_auth: {user: NAME, password_file: FILE}, or listen on 127.0.0.1"
        }
        let reason = code == 0 ? "not a HOST:PORT address" : String(cString: strerror(code))
        var text = "cannot listen on \(address) (\(key)): \(reason)"
        if code == EADDRINUSE { text += "; another process has that port (`ss -ltnp` shows which)" }
        if key == "admin.listen" { text += "; admin.listen: \"\" (or --admin-listen \"\") runs without the page" }
        return text
    }

    /// Runs `bind`, turning its failure into a ``ListenFailure`` for `key` and `address`.
    static func binding<T>(key: String, address: String, _ bind: () throws(EventIOError) -> T) throws(ListenFailure)
        -> T
    {
        do {
            return try bind()
        } catch {
            throw ListenFailure(key: key, address: address, code: error.code)
        }
    }
}
