/// Ordered, named schema migrations tracked in `PRAGMA user_version`.
/// A file newer than the code knows is refused, not rewritten.
public struct Migrator: Sendable {
    /// One migration: a name (for logs) and its SQL.
    public struct Migration: Sendable {
        public let name: String
        public let sql: String
        public init(_ name: String, sql: String) {
            self.name = name
            self.sql = sql
        }
    }

    /// What ``migrate(_:)`` found.
    public enum Outcome: Equatable, Sendable {
        /// Migrations were applied; the file is at `version`.
        case migrated(from: Int, to: Int)
        /// The file is newer than these migrations (`fileVersion > known`).
        case tooNew(fileVersion: Int, known: Int)
    }

    /// The migrations in order; version N means the first N were applied.
    public let migrations: [Migration]

    public init(_ migrations: [Migration]) { self.migrations = migrations }

    /// Applies the missing migrations, each in its own write transaction. The version is read
    /// again inside it: another process opening the same new file at the same moment may have
    /// applied that step already (it is then skipped, not applied twice).
    public func migrate(_ database: Database) throws -> Outcome {
        let current = database.userVersion
        guard current <= migrations.count else { return .tooNew(fileVersion: current, known: migrations.count) }
        for (index, migration) in migrations.enumerated() where index >= current {
            try database.transaction {
                guard try database.readUserVersion() == index else { return }
                try database.execute(migration.sql)
                try database.setUserVersion(index + 1)
            }
        }
        return .migrated(from: current, to: migrations.count)
    }
}
