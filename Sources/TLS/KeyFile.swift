#if canImport(Glibc)
    import Glibc
#endif

/// Permissions of key files: a private key must be readable by its owner only.
public enum KeyFile {
    /// The permission bits of `path` (`0o600`…), or `nil` when it cannot be read.
    public static func mode(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_mode) & 0o777
    }
}
