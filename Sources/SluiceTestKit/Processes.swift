import Foundation

/// Runs a program to its end: `input` on its standard input; its standard output, and its
/// standard error too unless `dropErrors` (a tool whose stderr is noise). `executable` is a path,
/// or a name looked up on PATH.
public func runProgram(
    _ executable: String, _ arguments: [String], input: [UInt8] = [], environment: [String: String]? = nil,
    currentDirectory: URL? = nil, dropErrors: Bool = false
) throws -> (status: Int32, output: String) {
    let process = Process()
    if executable.hasPrefix("/") {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
    } else {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
    }
    if let environment { process.environment = environment }
    if let currentDirectory { process.currentDirectoryURL = currentDirectory }
    let (stdin, stdout) = (Pipe(), Pipe())
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = dropErrors ? FileHandle.nullDevice : stdout
    try process.run()
    stdin.fileHandleForWriting.write(Data(input))
    try stdin.fileHandleForWriting.close()
    let data = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
