// swift-tools-version:6.0
// The JSON null stripper on its own, against Foundation's JSONSerialization (parse, strip,
// serialise). A separate package so that CI never builds it; run ../strip.sh.
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its directory: the clone's name, whatever it is.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

let package = Package(
    name: "StripBench",
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(
            name: "StripBench",
            dependencies: [.product(name: "Sluice", package: root.lastPathComponent)],
            swiftSettings: [.unsafeFlags(["-Ounchecked"])])
    ]
)
