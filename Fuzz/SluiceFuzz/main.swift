// libFuzzer entry points for Sluice's input-facing code. Built only by `Fuzz/run.sh` (the package
// adds this target when SLUICE_FUZZ is set), with `-sanitize=fuzzer,address`. The target is
// chosen by SLUICE_FUZZ_TARGET: request-parser, chunked, mime, config, null-stripper.
// Each checks properties, not only "does not crash": split input parses like whole input, the
// stripper's output is valid and a fixed point, a parsed media type survives a round trip.
import Foundation

@testable import Sluice

enum Target: String, CaseIterable {
    case requestParser = "request-parser"
    case chunked
    case mime
    case config
    case nullStripper = "null-stripper"
}

let target: Target = {
    let name = ProcessInfo.processInfo.environment["SLUICE_FUZZ_TARGET"] ?? ""
    guard let target = Target(rawValue: name) else {
        fatalError("SLUICE_FUZZ_TARGET must be one of \(Target.allCases.map(\.rawValue))")
    }
    return target
}()

/// libFuzzer's driver (`LLVMFuzzerRunDriver`, in the `-sanitize=fuzzer` runtime).
@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafeRawPointer?, Int) -> CInt
) -> CInt

/// SwiftPM links an executable's entry point under this name; it hands control to libFuzzer.
@_cdecl("SluiceFuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runDriver(&count, &arguments) { start, size in fuzz(start, size) }
}

func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: count)
    switch target {
    case .requestParser: fuzzRequestParser(input)
    case .chunked: fuzzChunked(input)
    case .mime: fuzzMIME(input)
    case .config: fuzzConfig(input)
    case .nullStripper: fuzzNullStripper(input)
    }
    return 0
}

/// Whole input and the same bytes fed in two parts (as a socket delivers them) must agree, and
/// no accepted head holds a CR, LF or NUL in a field value.
func fuzzRequestParser(_ input: UnsafeRawBufferPointer) {
    var limits = RequestParser.Limits()
    limits.maxRequestLine = 512
    limits.maxHeaderBytes = 2048
    var whole = RequestParser(limits: limits)
    let outcome = whole.parse(input)
    if case .head(let request, _) = outcome {
        precondition(request.headers.allSatisfy { !$0.value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 } })
    }
    guard input.count > 1 else { return }
    var split = RequestParser(limits: limits)
    let first = split.parse(UnsafeRawBufferPointer(rebasing: input[..<(Int(input[0]) % input.count)]))
    let second: RequestParser.Outcome
    if case .needMore = first { second = split.parse(input) } else { second = first }
    switch (outcome, second) {
    case (.head(let a, let used), .head(let b, let usedSplit)):
        precondition(used == usedSplit && a.method == b.method && a.headers.count == b.headers.count)
    case (.needMore, .needMore), (.failure, .failure): break
    default: preconditionFailure("parsing in two parts gave \(second), whole input gave \(outcome)")
    }
}

/// One call and byte-at-a-time decoding must produce the same bytes or both fail.
func fuzzChunked(_ input: UnsafeRawBufferPointer) {
    func decode(step: Int) -> [UInt8]? {
        var decoder = ChunkedDecoder(maxBodyBytes: 1 << 20, maxMetadataBytes: 256)
        var output: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 97)
        var offset = 0
        while offset < input.count, !decoder.isFinished {
            let end = min(input.count, offset + step)
            var piece = UnsafeRawBufferPointer(rebasing: input[offset..<end])
            while !piece.isEmpty, !decoder.isFinished {
                let result = scratch.withUnsafeMutableBytes { buffer -> ChunkedDecoder.Step? in
                    try? decoder.decode(piece, into: buffer)
                }
                guard let result else { return nil }
                output += scratch[0..<result.produced]
                piece = UnsafeRawBufferPointer(rebasing: piece[result.consumed...])
                if result.consumed == 0 && result.produced == 0 { break }
            }
            offset = end
        }
        return decoder.isFinished ? output : nil
    }
    let whole = decode(step: input.count)
    let bytewise = decode(step: 1)
    precondition(whole == bytewise, "chunked decoding depends on how the input is split")
}

/// Media types: a parsed `Content-Type` re-parses to itself; configured ranges never crash, and a
/// range always matches the `Content-Type` it was made from.
func fuzzMIME(_ input: UnsafeRawBufferPointer) {
    let text = String(decoding: input, as: UTF8.self)
    if let type = MediaType(text) {
        precondition(MediaType(type.essence) == type)
        _ = type.isJSON
        if case .success(let range) = MediaRange.parse(type.essence) {
            precondition(range.matches(contentType: text), "\(range) does not match \(text)")
        }
    }
    if case .success(let range) = MediaRange.parse(text) {
        _ = range.matches(contentType: "application/json")
    }
    _ = StatusSet.parseItem(text)
}

/// Any text: a configuration or a ConfigError, never a crash.
func fuzzConfig(_ input: UnsafeRawBufferPointer) {
    _ = try? ConfigLoader.load(yaml: String(decoding: input, as: UTF8.self))
}

/// The stripper's output is valid JSON with nothing left to strip, and `all` strips at least as much.
func fuzzNullStripper(_ input: UnsafeRawBufferPointer) {
    for mode in NullStripper.Mode.allCases {
        var output: [UInt8] = []
        let outcome = NullStripper.strip(input, mode: mode, into: &output)
        switch outcome {
        case .invalid: return
        case .unchanged: break
        case .stripped:
            precondition(output.count < input.count)
            var again: [UInt8] = []
            let second = output.withUnsafeBytes { NullStripper.strip($0, mode: mode, into: &again) }
            precondition(second == .unchanged, "stripped output is not a fixed point: \(second)")
        }
    }
}
