import Foundation

/// A command that could not do its work at run time (as opposed to a usage error, which
/// ArgumentParser's `ValidationError` reports with the usage text and exit code 64).
///
/// It prints as `Error: …` on stderr, with no usage text, and exits with its own code, in the
/// spirit of `sysexits.h`: 66 when an input the command needs is missing, 1 otherwise.
struct CommandFailure: Error, CustomStringConvertible {
    /// What went wrong, and what to do next.
    var description: String
    /// The process's exit status.
    var exitCode: Int32

    /// An input the command reads does not exist or cannot be read (`EX_NOINPUT`, 66).
    static func noInput(_ message: String) -> CommandFailure { CommandFailure(description: message, exitCode: 66) }

    /// Arguments that name what the input does not have (an operation, a status, a media type of
    /// a contract): a usage error found only once the input is read (`EX_USAGE`, 64), printed
    /// without the usage text, so that a script tells it from a verdict (exit status 1).
    static func misnamed(_ message: String) -> CommandFailure { CommandFailure(description: message, exitCode: 64) }

    /// The configuration cannot be put to work: a contract that does not load, a listener that
    /// cannot be opened (`EX_CONFIG`, 78), so that a pipeline tells it from a broken contract.
    static func configuration(_ message: String) -> CommandFailure {
        CommandFailure(description: message, exitCode: 78)
    }

    /// Any other failure at run time (exit status 1).
    static func failed(_ message: String) -> CommandFailure { CommandFailure(description: message, exitCode: 1) }
}
