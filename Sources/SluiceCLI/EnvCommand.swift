import ArgumentParser
import Foundation
import Sluice

/// `sluice env`: the lines that point a shell at the proxy this configuration runs
/// (`eval "$(sluice env)"`), the same environment `sluice run` gives its command.
struct EnvCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "env",
        abstract: "Print the lines that point a terminal at Sluice (eval \"$(sluice env)\").",
        discussion: """
            The proxy variables in both cases (HTTP_PROXY, https_proxy, …) name this configuration's \
            listen address; NO_PROXY keeps the hosts it named but loopback ones, so origins on \
            loopback go through Sluice too (--no-proxy LIST exempts more hosts); NODE_USE_ENV_PROXY=1 \
            makes Node (22.21, 24 and later) read them. When Sluice intercepts HTTPS, a CA bundle (the system's \
            CAs plus Sluice's, written next to Sluice's CA) is named by the variables OpenSSL, curl, \
            Python requests and pip, Node, git, Ruby, Go, the AWS CLI and Deno read. What the shell \
            had in these variables is kept (SLUICE_SAVED_*); --unset prints the lines that give it \
            back and remove the rest.
              eval "$(sluice env --config my.yaml)"
              sluice env --shell fish | source
              sluice env --shell powershell | Invoke-Expression
            """)

    enum Shell: String, ExpressibleByArgument, CaseIterable {
        case sh, fish, powershell

        /// The shells' own names too: bash, zsh and dash are sh; pwsh is PowerShell.
        init?(argument: String) {
            switch argument.lowercased() {
            case "sh", "bash", "zsh", "dash", "ksh": self = .sh
            case "fish": self = .fish
            case "powershell", "pwsh": self = .powershell
            default: return nil
            }
        }
    }

    @OptionGroup var options: ConfigOptions
    @Option(help: "sh (default; bash, zsh, dash), fish or powershell (pwsh).") var shell: Shell = .sh
    @Option(name: .customLong("no-proxy"), help: "Hosts reached directly (NO_PROXY), comma-separated.")
    var noProxy = ""
    @Flag(help: "Print the lines that undo it: the values the shell had back, the rest removed.") var unset = false

    func run() throws {
        let inherited = ProcessInfo.processInfo.environment
        if unset {
            // Nothing to undo (never pointed at Sluice, or undone already): the terminal's own
            // values stay.
            guard inherited[ProxyEnvironment.marker] != nil else {
                return print(comment("nothing to undo: this terminal was not pointed at Sluice by sluice env"))
            }
            var lines: [String] = []
            for (name, value) in ProxyEnvironment.restored(from: inherited) {
                guard let value else {
                    lines.append(remove(name))
                    continue
                }
                lines += [set(name, value), remove(ProxyEnvironment.savedPrefix + name)]
            }
            print((lines + [remove(ProxyEnvironment.marker)]).joined(separator: "\n"))
            return
        }
        let (configuration, _) = try options.load()
        let listen = configuration.listen
        guard let colon = listen.lastIndex(of: ":"), let port = UInt16(listen[listen.index(after: colon)...]) else {
            throw CommandFailure.failed("listen is not HOST:PORT: \(listen)")
        }
        // A wildcard listener is reached on loopback from this machine.
        let written = String(listen[..<colon])
        let host = ["0.0.0.0", "::", "[::]", ""].contains(written) ? "127.0.0.1" : written
        var bundle: String?
        if configuration.tls.isConfigured(rules: configuration.rules) {
            guard let contents = ProxyEnvironment.bundleContents(configuration) else {
                throw CommandFailure.noInput(
                    "Sluice intercepts HTTPS but has no CA yet at \(configuration.tls.caCert): run `sluice ca init\(options.file.map { " --config \($0)" } ?? "")` (or start `sluice serve` once) with this configuration"
                )
            }
            // Written anew each time (the system's CAs change with updates), in one step.
            bundle = try ProxyEnvironment.replace(
                contents, directory: (configuration.tls.caCert as NSString).deletingLastPathComponent,
                name: ProxyEnvironment.bundleName)
        }
        // With proxy_auth, the credentials go in the URL, as clients expect them there.
        var credentials = ""
        if let auth = configuration.proxyAuth {
            guard let data = FileManager.default.contents(atPath: auth.passwordFile),
                let password = String(decoding: data, as: UTF8.self).split(separator: "\n").first
            else { throw CommandFailure.noInput("cannot read proxy_auth.password_file \(auth.passwordFile)") }
            let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
            func encoded(_ text: some StringProtocol) -> String {
                String(text).addingPercentEncoding(withAllowedCharacters: allowed) ?? String(text)
            }
            credentials = encoded(auth.user) + ":" + encoded(password.trimmingCharacters(in: ["\r"])) + "@"
        }
        // The hosts this terminal already reaches directly stay so (a corporate network's), but
        // loopback ones: origins on this machine go through Sluice.
        let environment = ProxyEnvironment(
            proxy: "http://\(credentials)\(host):\(port)", noProxy: ProxyEnvironment.noProxy(adding: noProxy),
            bundle: bundle)
        // What the shell had is kept for `--unset` to give back.
        var lines = ProxyEnvironment.kept(from: inherited).map { set($0.name, $0.value) }
        lines.append(set(ProxyEnvironment.marker, "1"))
        lines += ProxyEnvironment.clearedNames.map(remove)
        lines += environment.assignments.map { set($0.0, $0.1) }
        if bundle != nil {
            lines.append(comment("Java reads no variable: import Sluice's CA into a truststore (keytool -importcert)."))
            lines.append(comment("Go reads SSL_CERT_FILE on Linux; on macOS trust the CA in the keychain."))
        }
        lines.append(comment("undo: sluice env --unset\(shell == .sh ? "" : " --shell \(shell.rawValue)")"))
        print(lines.joined(separator: "\n"))
    }

    private func set(_ name: String, _ value: String) -> String {
        switch shell {
        case .sh: "export \(name)=\(quoted(value))"
        case .fish: "set -gx \(name) \(quoted(value))"
        case .powershell: "$env:\(name) = \(quoted(value))"
        }
    }

    private func remove(_ name: String) -> String {
        switch shell {
        case .sh: "unset \(name)"
        case .fish: "set -e \(name)"
        case .powershell: "Remove-Item Env:\(name) -ErrorAction SilentlyContinue"
        }
    }

    private func comment(_ text: String) -> String { "# " + text }

    /// In single quotes, where nothing expands; a quote inside is closed, escaped and reopened for
    /// sh, escaped for fish, doubled for PowerShell.
    func quoted(_ value: String) -> String {
        let inner: String =
            switch shell {
            case .sh: value.replacingOccurrences(of: "'", with: #"'\''"#)
            case .fish: value.replacingOccurrences(of: "\\", with: #"\\"#).replacingOccurrences(of: "'", with: #"\'"#)
            case .powershell: value.replacingOccurrences(of: "'", with: "''")
            }
        return "'" + inner + "'"
    }
}
