import Foundation
import Sluice

#if canImport(Glibc)
    import Glibc
#endif

/// What points a process at Sluice: the proxy variables in both cases, `NO_PROXY`, and, when
/// Sluice intercepts HTTPS, a CA bundle (the system's CAs and Sluice's) named by the variables the
/// common runtimes read. `sluice run` gives it to its command; `sluice env` prints it for a shell.
struct ProxyEnvironment {
    /// `http://127.0.0.1:8080`.
    var proxy: String
    /// Hosts reached directly; empty by default (origins on loopback go through Sluice too).
    var noProxy: String
    /// The CA bundle's path, when Sluice intercepts.
    var bundle: String?

    static let proxyNames = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]
    static let noProxyNames = ["NO_PROXY", "no_proxy"]
    /// OpenSSL and what reads its variable (curl, Ruby, Go, Deno's OpenSSL-free TLS aside),
    /// Python requests and pip, curl, Node, git, the AWS CLI and SDKs, Deno.
    static let bundleNames = [
        "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO",
        "AWS_CA_BUNDLE", "DENO_CERT",
    ]
    /// A proxy for everything would bypass the per-scheme ones.
    static let clearedNames = ["ALL_PROXY", "all_proxy"]

    /// Every variable `sluice env` sets or removes.
    static let changedNames = clearedNames + proxyNames + noProxyNames + ["NODE_USE_ENV_PROXY"] + bundleNames
    /// Set by `sluice env`: what the shell has now is Sluice's, and what it had is kept.
    static let marker = "SLUICE_ENV"
    /// `SLUICE_SAVED_NAME` keeps the value `NAME` had before `sluice env`, for `--unset` to give back.
    static let savedPrefix = "SLUICE_SAVED_"

    /// The values `sluice env` keeps before it changes them: those `environment` has, unless an
    /// earlier `sluice env` changed it already (then they are Sluice's, and the first ones stay kept).
    static func kept(from environment: [String: String]) -> [(name: String, value: String)] {
        guard environment[marker] == nil else { return [] }
        return changedNames.compactMap { name in environment[name].map { (savedPrefix + name, $0) } }
    }

    /// What `sluice env --unset` does to each variable: gives it back the value it had before
    /// `sluice env` (a corporate proxy, a CA bundle of its own), or removes it.
    static func restored(from environment: [String: String]) -> [(name: String, value: String?)] {
        changedNames.map { ($0, environment[savedPrefix + $0]) }
    }

    /// The variables to set, in a stable order. Node reads the proxy variables only when told to
    /// (22.21, 24 and later; earlier ones need an agent of their own).
    var assignments: [(String, String)] {
        Self.proxyNames.map { ($0, proxy) } + Self.noProxyNames.map { ($0, noProxy) } + [("NODE_USE_ENV_PROXY", "1")]
            + (bundle.map { path in Self.bundleNames.map { ($0, path) } } ?? [])
    }

    /// The hosts this process's `NO_PROXY` names (a corporate network's) without the loopback ones
    /// (origins on this machine go through Sluice), then `added`'s, each once.
    static func noProxy(adding added: String) -> String {
        let environment = ProcessInfo.processInfo.environment
        let inherited = environment["NO_PROXY"] ?? environment["no_proxy"] ?? ""
        let loopback: Set<String> = ["localhost", "127.0.0.1", "::1", "[::1]", "127.0.0.0/8", "::1/128", ".localhost"]
        func entries(_ list: String) -> [String] {
            list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        var hosts: [String] = []
        for entry in entries(inherited).filter({ !loopback.contains($0.lowercased()) && !$0.hasPrefix("127.") })
            + entries(added) where !hosts.contains(entry)
        {
            hosts.append(entry)
        }
        return hosts.joined(separator: ",")
    }

    /// `environment` with these applied.
    func applied(to environment: [String: String]) -> [String: String] {
        var out = environment
        for name in Self.clearedNames { out.removeValue(forKey: name) }
        for (name, value) in assignments { out[name] = value }
        return out
    }

    /// The system's CA certificates (Debian, Fedora, Alpine and macOS places), then Sluice's CA,
    /// as one PEM text; `nil` when Sluice does not intercept or has no CA yet.
    static func bundleContents(_ configuration: Configuration) -> Data? {
        guard configuration.tls.isConfigured(rules: configuration.rules),
            let local = FileManager.default.contents(atPath: configuration.tls.caCert)
        else { return nil }
        var bundle = Data()
        for system in ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"] {
            if let data = FileManager.default.contents(atPath: system) {
                bundle = data
                break
            }
        }
        if !bundle.isEmpty && bundle.last != 0x0A { bundle.append(0x0A) }
        bundle.append(local)
        return bundle
    }

    /// The bundle's name, beside Sluice's CA.
    static let bundleName = "sluice-ca-bundle.pem"

    /// Writes the bundle anew when one was written before (by `sluice env`) and no longer holds
    /// what it should (a new CA after `sluice ca init` or `serve`; updated system CAs): terminals
    /// set up earlier keep working. Its path when rewritten.
    @discardableResult
    static func refreshBundle(_ configuration: Configuration) -> String? {
        let directory = (configuration.tls.caCert as NSString).deletingLastPathComponent
        let path = (directory as NSString).appendingPathComponent(bundleName)
        guard FileManager.default.fileExists(atPath: path), let contents = bundleContents(configuration),
            FileManager.default.contents(atPath: path) != contents
        else { return nil }
        return try? replace(contents, directory: directory, name: bundleName)
    }

    /// Writes `contents` to `name` in `directory` in one step: a new file of its own (nobody could
    /// have guessed or planted it), renamed over the name (`rename(2)` replaces a symlink there
    /// without following it), so a reader never sees it missing or half written.
    static func replace(_ contents: Data, directory: String, name: String) throws -> String {
        let temporary = try writeExclusively(contents, directory: directory, name: ".\(name).\(UUID().uuidString)")
        let path = (directory as NSString).appendingPathComponent(name)
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw CommandFailure.failed("cannot write the CA bundle \(path)")
        }
        return path
    }

    /// Writes `contents` to a new file nobody could have guessed or planted (no symlink followed).
    static func writeExclusively(_ contents: Data, directory: String, name: String) throws -> String {
        let path = (directory as NSString).appendingPathComponent(name)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else { throw CommandFailure.failed("cannot write the CA bundle \(path)") }
        defer { close(descriptor) }
        let written = contents.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == contents.count else { throw CommandFailure.failed("cannot write the CA bundle \(path)") }
        return path
    }
}
