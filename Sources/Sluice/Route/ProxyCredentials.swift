import Foundation

/// `proxy_auth`'s Basic credentials (RFC 7617), read once from the password file, and the check
/// of a request's `Proxy-Authorization` against them. The password is never logged or served.
struct ProxyCredentials: Sendable {
    /// `base64(user:password)`, the token a correct header carries.
    private let token: [UInt8]

    /// Why the credentials cannot be used.
    struct Failure: Error, CustomStringConvertible, Sendable {
        let description: String
    }

    /// Reads the password file's first line.
    init(_ settings: Configuration.ProxyAuth) throws(Failure) {
        guard !settings.user.isEmpty else {
            throw Failure(description: "proxy_auth needs a user (proxy_auth.user) as well as password_file")
        }
        guard !settings.passwordFile.isEmpty,
            let data = FileManager.default.contents(atPath: settings.passwordFile)
        else {
            throw Failure(
                description:
                    "proxy_auth.password_file \(settings.passwordFile) cannot be read (its first line is the password)"
            )
        }
        let password =
            String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .first.map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) } ?? ""
        guard !password.isEmpty else {
            throw Failure(description: "proxy_auth.password_file \(settings.passwordFile) has an empty first line")
        }
        token = Array(Data((settings.user + ":" + password).utf8).base64EncodedString().utf8)
    }

    /// Whether `header` (a `Proxy-Authorization` value) carries these credentials; the token is
    /// compared in time that does not depend on where it differs.
    func accepts(_ header: String?) -> Bool {
        guard let header else { return false }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic" else { return false }
        let given = Array(parts[1].trimmingCharacters(in: .whitespaces).utf8)
        var difference = UInt8(given.count == token.count ? 0 : 1)
        for index in 0..<token.count { difference |= token[index] ^ (index < given.count ? given[index] : 0) }
        return difference == 0
    }
}
