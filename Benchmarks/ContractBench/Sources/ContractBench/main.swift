import Contract
import Foundation

// ContractBench SCHEMA DOCUMENT [ROUNDS] [CHUNK]
// Validates DOCUMENT against SCHEMA from its bytes, fed in CHUNK-byte pieces (64 KiB by default,
// as a socket would give them), ROUNDS times; prints the best MB/s (10^6 bytes), the verdict and
// the peak RSS. A 1 KiB document is run 100,000 times and reported per validation.
let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    print("usage: ContractBench SCHEMA DOCUMENT [ROUNDS] [CHUNK]")
    exit(64)
}
let rounds = arguments.count > 3 ? Int(arguments[3]) ?? 3 : 3
let chunk = arguments.count > 4 ? Int(arguments[4]) ?? 65536 : 65536
let validator = try SchemaValidator.load(file: arguments[1])
if ProcessInfo.processInfo.environment["STREAM_FROM_DISK"] != nil {
    // Read the file in 64 KiB pieces as it is validated: peak RSS is the validator's, not the document's.
    let handle = FileHandle(forReadingAtPath: arguments[2])!
    var validation = validator.validation()
    let start = DispatchTime.now().uptimeNanoseconds
    var total = 0
    while let piece = try handle.read(upToCount: 65536), !piece.isEmpty {
        total += piece.count
        piece.withUnsafeBytes { validation.feed($0) }
    }
    let verdict = validation.finish()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let rss = status.split(separator: "\n").first { $0.hasPrefix("VmHWM") } ?? "?"
    print(String(format: "%@ streamed from disk: %.1f MB/s, %d bytes, ", arguments[2], Double(total) / seconds / 1e6, total) + rss.replacingOccurrences(of: "\t", with: " "))
    print(verdict.passed ? "valid" : "invalid: \(verdict.total) violation(s), first \(verdict.violations.first!)")
    exit(0)
}
let body = FileManager.default.contents(atPath: arguments[2])!
let bytes = [UInt8](body)
let repeats = bytes.count < 64 * 1024 ? 100_000 : 1

func peakRSS() -> String {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    return status.split(separator: "\n").first { $0.hasPrefix("VmHWM") }.map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().joined(separator: " ") } ?? "?"
}

var best = Double.infinity
var verdict = Verdict()
for _ in 0..<rounds {
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<repeats {
        var validation = validator.validation()
        bytes.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let end = min(offset + chunk, all.count)
                validation.feed(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                offset = end
            }
        }
        verdict = validation.finish()
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    best = min(best, seconds)
}
let mbps = Double(bytes.count) * Double(repeats) / best / 1e6
if repeats > 1 {
    print(String(format: "%@: %.2f µs per validation (%d bytes), %.0f MB/s, peak RSS %@", arguments[2], best / Double(repeats) * 1e6, bytes.count, mbps, peakRSS()))
} else {
    print(String(format: "%@: %.1f MB/s (best of %d, %.3f s for %d bytes), peak RSS %@", arguments[2], mbps, rounds, best, bytes.count, peakRSS()))
}
print(verdict.passed ? "valid" : "invalid: \(verdict.total) violation(s), first \(verdict.violations.first!)")
