// swift-tools-version:6.0
// The contract validator on its own, from the bytes, against the documents of
// ../shared/bench/validators (jsonschema-rs, ajv, fastjsonschema, jsonschema). A separate package
// so that CI never builds it; run ../contract.sh.
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its directory: the clone's name, whatever it is.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

let package = Package(
    name: "ContractBench",
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(
            name: "ContractBench",
            dependencies: [.product(name: "Contract", package: root.lastPathComponent)])
    ]
)
