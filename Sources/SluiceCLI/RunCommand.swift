import ArgumentParser
import Foundation
import Logging
import Sluice

#if canImport(Glibc)
    import Glibc
#endif

/// The process `sluice run` passes SIGINT and SIGTERM on to (0: none yet); read by a signal
/// handler, so a plain global.
nonisolated(unsafe) private var signalledChild: pid_t = 0
/// A signal that came before CMD was started (passed on once it is).
nonisolated(unsafe) private var pendingSignal: Int32 = 0

/// `sluice run -- CMD ARGS…`: a command's traffic through a Sluice of its own, and its rules'
/// contracts as a report and an exit status (for CI).
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a command through Sluice; report what its traffic did to the contracts.",
        discussion: """
            Sluice starts on an ephemeral loopback port; CMD gets HTTP_PROXY and HTTPS_PROXY (both \
            cases) and an empty NO_PROXY, so origins on loopback go through it too; when Sluice \
            intercepts HTTPS, CMD also gets a CA bundle (the system's and Sluice's) named by \
            SSL_CERT_FILE, REQUESTS_CA_BUNDLE, PIP_CERT, CURL_CA_BUNDLE, NODE_EXTRA_CA_CERTS, \
            GIT_SSL_CAINFO, AWS_CA_BUNDLE and DENO_CERT. SIGINT and SIGTERM are passed on to CMD.

            The exit status is CMD's when it failed (127 when it was not found, 126 when it could not \
            be run); 78 when Sluice cannot start as configured (a contract that does not load), \
            before CMD runs; else 1 when a contract was broken (unless --fail-on is never), or when \
            no exchange was checked and --fail-on is unchecked; else 0.

              sluice run --config ci.yaml --report contracts.xml -- pytest tests/api
              sluice run --report out.sarif --report summary.md -- npm test
            """)

    @OptionGroup var options: ConfigOptions

    @Option(name: .long, help: "Write the report here (repeatable); the format comes from --format or the name.")
    var report: [String] = []

    @Option(
        name: .long, help: "junit, sarif, markdown or json (default: from the report's name: .xml .sarif .md .json).")
    var format: String?

    @Option(
        name: .customLong("fail-on"),
        help:
            "violations (default): exit 1 when a contract was broken; unchecked: also when no exchange was checked; never."
    )
    var failOn = "violations"

    @Option(name: .customLong("no-proxy"), help: "Hosts CMD reaches directly (NO_PROXY), comma-separated.")
    var noProxy = ""

    @Argument(parsing: .captureForPassthrough, help: "The command and its arguments (after --).")
    var command: [String] = []

    func validate() throws {
        // Before any `--`, `--help` asks for this command's help (passthrough would run it).
        if command.first == "--help" || command.first == "-h" { throw CleanExit.helpRequest(self) }
        let command = command.first == "--" ? Array(command.dropFirst()) : command
        guard !command.isEmpty else { throw ValidationError("give the command to run after --") }
        guard ["violations", "unchecked", "never"].contains(failOn) else {
            throw ValidationError("--fail-on is violations, unchecked or never")
        }
        if let format, ContractReport.Format(rawValue: format) == nil {
            throw ValidationError("--format is junit, sarif, markdown or json")
        }
        for file in report where format == nil && ContractReport.Format(fileName: file) == nil {
            throw ValidationError("--report \(file): say --format (its name does not tell: .xml .sarif .md .json)")
        }
    }

    func run() throws {
        let arguments = command.first == "--" ? Array(command.dropFirst()) : command
        // The reports' folders exist (made when missing) before CMD runs: a CI job learns of a
        // path it cannot write at once, not after its tests.
        for file in report {
            let folder = (file as NSString).deletingLastPathComponent
            guard !folder.isEmpty else { continue }
            if let failure = Self.makeFolder(folder) {
                throw CommandFailure.failed("cannot make the folder of the report \(file): \(failure)")
            }
            guard access(folder, W_OK) == 0 else {
                throw CommandFailure.failed(
                    "cannot write the report \(file): \(folder): \(String(cString: strerror(errno)))")
            }
        }
        // A configuration (or a contract in it) that does not load exits 78, before CMD runs: a
        // pipeline tells it from a broken contract (1). A missing file stays 66.
        var configuration: Configuration
        do {
            configuration = try options.load(creatingDataDirectory: true).0
        } catch let failure as CommandFailure where failure.exitCode == 1 {
            throw CommandFailure.configuration(failure.description)
        }
        configuration = configuration.with(listen: "127.0.0.1:0")
        configuration.admin.listen = ""
        // Nobody can decide a paused exchange here (no admin port): each would wait out
        // breakpoints.timeout, a CI job stalled without a word. They are off, and said so.
        let points = configuration.breakpoints.points.map(\.name)
        if !points.isEmpty {
            configuration.breakpoints.points = []
            FileHandle.standardError.write(
                Data(
                    "sluice run: breakpoints are off here (no admin port to decide them): \(points.joined(separator: ", "))\n"
                        .utf8))
        }
        configuration.log.access = false
        // Its own loopback proxy for CMD alone: no credentials to hand out.
        configuration.proxyAuth = nil
        // Sluice's own lines go to standard error, warnings and worse: standard output is CMD's.
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let logger = Logger(label: "sluice")
        let coverage = ContractCoverage()
        let proxy: EmbeddedProxy
        do {
            proxy = try EmbeddedProxy(configuration: configuration, logger: logger, monitors: [coverage])
        } catch {
            throw CommandFailure.configuration("cannot start the proxy: \(error)")
        }
        let bundle: String?
        do {
            bundle = try caBundle(configuration)
        } catch {
            proxy.stop()
            throw error
        }
        defer { if let bundle { try? FileManager.default.removeItem(atPath: bundle) } }

        forwardSignals()
        let child: pid_t
        do {
            let variables = ProxyEnvironment(
                proxy: "http://127.0.0.1:\(proxy.port)", noProxy: ProxyEnvironment.noProxy(adding: noProxy),
                bundle: bundle)
            child = try Self.spawn(arguments, environment: variables.applied(to: ProcessInfo.processInfo.environment))
        } catch {
            proxy.stop()
            throw error
        }
        signalledChild = child
        // One that came while CMD was being started goes on now.
        if pendingSignal != 0 { kill(child, pendingSignal) }
        let status = Self.wait(for: child)
        signalledChild = 0
        proxy.stop()

        let result = ContractReport(configuration: configuration, coverage: coverage)
        // Every report that can be written is, and the summary said, before a failure is.
        var unwritten: [String] = []
        for file in report {
            let chosen = format.flatMap(ContractReport.Format.init(rawValue:)) ?? ContractReport.Format(fileName: file)!
            if let named = ContractReport.Format(fileName: file), named != chosen {
                FileHandle.standardError.write(
                    Data(
                        "sluice run: warning: \(file) is written as \(chosen.rawValue) (--format), not the \(named.rawValue) its name says\n"
                            .utf8))
            }
            if let failure = Self.write(Array(result.text(chosen).utf8), to: file) {
                unwritten.append("cannot write the report \(file): \(failure)")
            }
        }
        FileHandle.standardError.write(Data((summary(result) + "\n").utf8))
        // A run that checked nothing proves nothing: said every time, a failure when asked.
        if result.checkedExchanges == 0 {
            FileHandle.standardError.write(
                Data(
                    ("sluice run: warning: no exchange was checked against a contract: CMD's traffic did not reach "
                        + "Sluice (a client that ignores HTTP_PROXY), or went to hosts no contract rule matches (an "
                        + "https:// host is checked only when intercepted); --fail-on unchecked makes this a failure\n")
                        .utf8))
        }
        if !unwritten.isEmpty { throw CommandFailure.failed(unwritten.joined(separator: "; ")) }
        if status != 0 { throw ExitCode(status) }
        if result.failedExchanges > 0 && failOn != "never" { throw ExitCode(1) }
        if result.checkedExchanges == 0 && failOn == "unchecked" { throw ExitCode(1) }
    }

    /// Makes `folder` and those above it that are missing; the reason (`Permission denied`) when
    /// it cannot.
    static func makeFolder(_ folder: String) -> String? {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) {
            return isFolder.boolValue ? nil : "\(folder) is a file"
        }
        let parent = (folder as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != folder, let failure = makeFolder(parent) { return failure }
        guard mkdir(folder, 0o755) == 0 || errno == EEXIST else {
            return "\(folder): \(String(cString: strerror(errno)))"
        }
        return nil
    }

    /// Writes `bytes` to `path` (replacing it); the reason (`No space left on device`) when it cannot.
    static func write(_ bytes: [UInt8], to path: String) -> String? {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                let failure = String(cString: strerror(errno))
                close(fd)
                return failure
            }
            offset += written
        }
        // (A quota or a network file system may say so only at the close.)
        return close(fd) == 0 ? nil : String(cString: strerror(errno))
    }

    /// `sluice run: 12 exchanges checked, 1 broke a contract; 3 documented responses never seen`.
    private func summary(_ report: ContractReport) -> String {
        let never = report.rules.reduce(0) { $0 + $1.neverSeenCount }
        var line = "sluice run: \(report.checkedExchanges) exchange\(report.checkedExchanges == 1 ? "" : "s") checked"
        line += " against \(report.rules.count) contract\(report.rules.count == 1 ? "" : "s")"
        line += ", \(report.failedExchanges) broke \(report.failedExchanges == 1 ? "one" : "them")"
        line += "; \(never) documented response\(never == 1 ? "" : "s") never seen"
        if !self.report.isEmpty { line += "; report: " + self.report.joined(separator: ", ") }
        return line
    }

    /// The system's CAs and Sluice's in one PEM file, when Sluice intercepts HTTPS (so that CMD
    /// trusts the intercepted origins and still every other one); removed at the end.
    func caBundle(_ configuration: Configuration) throws -> String? {
        guard let contents = ProxyEnvironment.bundleContents(configuration) else { return nil }
        return try ProxyEnvironment.writeExclusively(
            contents, directory: FileManager.default.temporaryDirectory.path,
            name: "sluice-run-ca-\(UUID().uuidString).pem")
    }

    /// SIGINT and SIGTERM sent to this process (by `kill`, a CI runner, a supervisor) go on to
    /// CMD. CMD shares the terminal's process group, so a Ctrl-C reaches it (and what it started)
    /// directly; a signal the kernel sent for the terminal is therefore not passed on twice.
    private func forwardSignals() {
        // A parent may have them blocked (a test runner's thread); CMD starts with none blocked.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        for number in [SIGINT, SIGTERM] { sigaddset(&unblocked, number) }
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        for number in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.sa_flags = SA_SIGINFO | SA_RESTART
            action.__sigaction_handler.sa_sigaction = { number, info, _ in
                // SI_USER and SI_QUEUE (kill, sigqueue) are 0 and below; the terminal's are above.
                guard let info, info.pointee.si_code <= 0 else { return }
                let pid = signalledChild
                if pid > 0 { kill(pid, number) } else { pendingSignal = number }
            }
            sigaction(number, &action, nil)
        }
    }

    /// Starts CMD (looked up on `PATH`) with `environment`, every signal at its default and none
    /// blocked: what this process ignores (SIGPIPE, for its sockets) is not CMD's business.
    static func spawn(_ arguments: [String], environment: [String: String]) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], nil, &attributes, argv, envp)
        guard result == 0 else {
            // As shells and env(1) say it: 127 for a command not found, 126 for one that cannot
            // be run (1 is a broken contract).
            throw CommandFailure(
                description: "cannot run \(arguments[0]): \(String(cString: strerror(result)))",
                exitCode: result == ENOENT ? 127 : 126)
        }
        return pid
    }

    /// CMD's exit status, or 128 + the signal that ended it (as shells report it).
    static func wait(for pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return 1 }
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

}
