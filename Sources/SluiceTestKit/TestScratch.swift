import Foundation

/// Where tests put their files: one folder per test process (`sluice-tests-PID` in the system's
/// temporary folder), removed when the process exits, so that a run leaves nothing behind even
/// for origins and harnesses held in `static` properties, which are never deinitialised. A folder
/// left by a run that crashed or was killed goes at the start of the next run.
public enum TestScratch {
    private static let prefix = "sluice-tests-"

    /// This process's folder, made on first use.
    public static let root: URL = {
        let system = FileManager.default.temporaryDirectory
        removeStale(in: system)
        let root = system.appendingPathComponent(prefix + String(getpid()))
        try? FileManager.default.removeItem(at: root)  // a reused PID's leftovers
        // 0755: servers that drop root for their own user (Squid) reach their folders inside.
        try? FileManager.default.createDirectory(
            at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        atexit { try? FileManager.default.removeItem(at: TestScratch.root) }
        return root
    }()

    /// Folders of earlier runs whose process is gone.
    static func removeStale(in system: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: system.path)) ?? []
        for name in names where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid != getpid(), !isRunning(pid) else { continue }
            try? FileManager.default.removeItem(at: system.appendingPathComponent(name))
        }
    }

    static func isRunning(_ pid: pid_t) -> Bool { kill(pid, 0) == 0 || errno == EPERM }
}
