import Foundation
import Sluice

/// Usage: StripBench FILE [ROUNDS]  — FILE is written first if it does not exist (a 64 MiB document).
let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: StripBench FILE [ROUNDS]\n".utf8))
    exit(2)
}
let path = arguments[1]
let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5

/// A deterministic document of about `size` bytes: records with nulls at several depths,
/// strings with escapes, numbers in several forms, pretty-printed like a typical API dump.
func makeDocument(size: Int) -> [UInt8] {
    var out = "[\n"
    var index = 0
    while out.utf8.count < size {
        if index > 0 { out += ",\n" }
        out += """
              {
                "id": \(index),
                "name": "user \(index) \\"quoted\\" \\u00e9",
                "email": null,
                "score": \(Double(index) * 1.25e-3),
                "active": \(index % 2 == 0),
                "address": { "street": null, "city": "Town \(index % 97)", "zip": null, "geo": [\(index % 180).5, -\(index % 90).25] },
                "tags": ["a", null, "b", {"k": null, "v": \(index)}],
                "manager": null,
                "notes": "\(String(repeating: "x", count: index % 40))"
              }
            """
        index += 1
    }
    out += "\n]\n"
    return Array(out.utf8)
}

if !FileManager.default.fileExists(atPath: path) {
    FileManager.default.createFile(atPath: path, contents: Data(makeDocument(size: 64 << 20)))
}
let input = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
let megabytes = Double(input.count) / 1e6

func seconds(_ body: () -> Void) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

// Sluice's stripper: best of `rounds` into one output buffer allocated once (as a server reuses its
// buffers), then the same with a new array per call (the allocation's page faults included).
let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: input.count, alignment: 64)
var best = Double.infinity
var removed = 0
var written = 0
for _ in 0..<rounds {
    let time = seconds {
        let result = input.withUnsafeBytes { NullStripper.strip($0, mode: .members, into: buffer) }
        if case .stripped(let count) = result.outcome { removed = count }
        written = result.written
    }
    best = min(best, time)
}
let sluiceRate = Double(input.count) / best / 1e9
print(
    String(
        format: "sluice NullStripper: %.1f MB in %.3f s = %.2f GB/s (%d members removed, %d bytes out)",
        megabytes, best, sluiceRate, removed, written))
var fresh = Double.infinity
for _ in 0..<rounds {
    var array: [UInt8] = []
    fresh = min(fresh, seconds { _ = input.withUnsafeBytes { NullStripper.strip($0, mode: .members, into: &array) } })
}
print(
    String(format: "  with a new output array per call: %.3f s = %.2f GB/s", fresh, Double(input.count) / fresh / 1e9))
let output = [UInt8](UnsafeRawBufferPointer(rebasing: buffer[0..<written]))
try Data(output).write(to: URL(fileURLWithPath: path + ".sluice.out"))

// Foundation: parse, remove NSNull members recursively, serialise.
func removingNulls(_ value: Any) -> Any {
    if let object = value as? [String: Any] {
        var result: [String: Any] = [:]
        for (key, item) in object where !(item is NSNull) { result[key] = removingNulls(item) }
        return result
    }
    if let array = value as? [Any] { return array.map(removingNulls) }
    return value
}
var foundationBest = Double.infinity
if ProcessInfo.processInfo.environment["SKIP_FOUNDATION"] != nil { exit(0) }
for _ in 0..<max(1, rounds / 2) {
    let time = seconds {
        let object = try! JSONSerialization.jsonObject(with: Data(input), options: [.fragmentsAllowed])
        _ = try! JSONSerialization.data(withJSONObject: removingNulls(object), options: [.fragmentsAllowed])
    }
    foundationBest = min(foundationBest, time)
}
print(
    String(
        format: "Foundation JSONSerialization parse+strip+serialise: %.3f s = %.3f GB/s (sluice is %.1fx faster)",
        foundationBest, Double(input.count) / foundationBest / 1e9, foundationBest / best))
print("RESULT sluice_s=\(best) foundation_s=\(foundationBest) bytes=\(input.count)")
