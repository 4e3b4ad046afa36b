// swift-tools-version:6.0
import PackageDescription

/// Strictness shared by every Swift target (Hummingbird's lesson: set it once).
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// For the modules that run on the loop thread: their class fields are owned by that one thread,
/// and release builds skip the dynamic exclusivity checks on them (debug builds and the tests keep
/// them). callgrind counted the checks at 4 % of a pass-through request's instructions
/// (`swift_beginAccess`, `AccessSet::insert`) without their ever firing.
let loopThread: [SwiftSetting] =
    strict + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

/// For the proxy's per-request code: copies of large structs and enums (an optional error, a
/// parent proxy, a response head) as inline retains, not calls through the type's value
/// witnesses. The optimizer's type-layout lowering outlined each such copy as a metadata lookup
/// and an indirect call: 4 % of a 1 KiB pass-through's instructions, 7 % of a hit's (callgrind).
/// Release builds then lower value operations as debug builds (and so the tests) always did.
/// Not for `Contract`: its validator measured 9 % slower with it (`Benchmarks/contract.sh`).
let inlineCopies: [SwiftSetting] = loopThread + [.unsafeFlags(["-Xfrontend", "-disable-type-layout"])]

let package = Package(
    name: "Sluice",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "sluice", targets: ["SluiceCLI"]),
        .library(name: "Sluice", targets: ["Sluice"]),
        .library(name: "SluiceTestKit", targets: ["SluiceTestKit"]),
        .library(name: "Contract", targets: ["Contract"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
    ],
    targets: [
        // MARK: - C doors (module maps and shims only; no logic)
        .systemLibrary(
            name: "CEvent", path: "Sources/CEvent", pkgConfig: "libevent",
            providers: [.apt(["libevent-dev"])]),
        .systemLibrary(
            name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CCodec", path: "Sources/CCodec",
            providers: [.apt(["zlib1g-dev", "libbrotli-dev"])]),
        .systemLibrary(
            name: "CTLS", path: "Sources/CTLS", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]),
        // No pkgConfig: hiredis.pc adds -D_FILE_OFFSET_BITS=64, a flag SwiftPM refuses with a
        // warning on every build; the shim includes <hiredis/…> from the default include path.
        .systemLibrary(name: "CRedis", path: "Sources/CRedis", providers: [.apt(["libhiredis-dev"])]),
        .systemLibrary(
            name: "CPCRE2", path: "Sources/CPCRE2", pkgConfig: "libpcre2-8", providers: [.apt(["libpcre2-dev"])]),
        .systemLibrary(
            name: "CIDN2", path: "Sources/CIDN2", pkgConfig: "libidn2", providers: [.apt(["libidn2-dev"])]),
        .systemLibrary(
            name: "CQRencode", path: "Sources/CQRencode", pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(
            name: "CNGHTTP2", path: "Sources/CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),

        // MARK: - Swift faces of the C libraries (the only importers of C)
        .target(name: "EventIO", dependencies: ["CEvent"], swiftSettings: inlineCopies),
        .target(name: "Curl", dependencies: ["CCurl", "EventIO"], swiftSettings: inlineCopies),
        .target(name: "SQLite", dependencies: ["CSQLite"], swiftSettings: inlineCopies),
        .target(name: "Codec", dependencies: ["CCodec"], swiftSettings: strict),
        .target(name: "TLS", dependencies: ["CTLS"], swiftSettings: inlineCopies),
        .target(name: "Redis", dependencies: ["CRedis", "EventIO"], swiftSettings: inlineCopies),
        .target(name: "Regexp", dependencies: ["CPCRE2"], swiftSettings: strict),
        .target(name: "HTTP2", dependencies: ["CNGHTTP2"], swiftSettings: inlineCopies),
        .target(name: "IDNA", dependencies: ["CIDN2"], swiftSettings: strict),
        .target(name: "QRCode", dependencies: ["CQRencode"], swiftSettings: strict),

        // MARK: - API contracts (pure Swift; PCRE2 through Regexp, libidn2 through IDNA)
        .target(
            name: "Contract", dependencies: ["Regexp", "IDNA", .product(name: "Yams", package: "Yams")],
            // The validator's state is owned by one validation at a time; dynamic exclusivity
            // checks on its class fields cost a fifth of its time (callgrind) and find nothing.
            swiftSettings: loopThread),

        // MARK: - The proxy
        .target(
            name: "Sluice",
            dependencies: [
                "EventIO", "Curl", "SQLite", "Codec", "TLS", "Redis", "Contract", "HTTP2", "QRCode",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // The admin page's files, compiled into the binary as bytes (`PackageResources`): one
            // binary, nothing read from disk at run time.
            resources: [
                .embedInCode("Admin/Page/index.html"), .embedInCode("Admin/Page/app.js"),
                .embedInCode("Admin/Page/app.css"), .embedInCode("Admin/Page/favicon.svg"),
            ],
            swiftSettings: inlineCopies),
        .executableTarget(
            name: "SluiceCLI",
            dependencies: [
                "Sluice", "Codec", "Contract",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict + [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))],
            // A static Swift runtime: only the pages Sluice uses are resident (peak RSS is a requirement).
            linkerSettings: [
                .unsafeFlags(["-static-stdlib", "-Xclang-linker", "-no-pie"], .when(configuration: .release))
            ]),
        .target(
            name: "SluiceTestKit",
            dependencies: ["Sluice", "EventIO", "TLS", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),

        // MARK: - Tests (mirror Sources)
        .testTarget(name: "EventIOTests", dependencies: ["EventIO", "SluiceTestKit"], swiftSettings: strict),
        .testTarget(name: "CurlTests", dependencies: ["Curl", "EventIO", "SluiceTestKit"], swiftSettings: strict),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite"], swiftSettings: strict),
        .testTarget(name: "CodecTests", dependencies: ["Codec"], swiftSettings: strict),
        .testTarget(name: "TLSTests", dependencies: ["TLS"], swiftSettings: strict),
        .testTarget(name: "RedisTests", dependencies: ["Redis", "EventIO", "SluiceTestKit"], swiftSettings: strict),
        .testTarget(name: "RegexpTests", dependencies: ["Regexp"], swiftSettings: strict),
        .testTarget(name: "HTTP2Tests", dependencies: ["HTTP2"], swiftSettings: strict),
        .testTarget(name: "IDNATests", dependencies: ["IDNA"], swiftSettings: strict),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode"], swiftSettings: strict),
        .testTarget(name: "ContractTests", dependencies: ["Contract"], swiftSettings: strict),
        .testTarget(
            name: "SluiceTests", dependencies: ["Sluice", "SluiceTestKit", "Codec", "SQLite", "TLS", "Redis"],
            swiftSettings: strict),
        .testTarget(
            name: "SluiceCLITests", dependencies: ["SluiceCLI", "SluiceTestKit", "SQLite", "TLS"],
            exclude: ["Resources"], swiftSettings: strict),
    ]
)

// `Fuzz/run.sh` builds libFuzzer entry points against the library; never part of a normal build.
if Context.environment["SLUICE_FUZZ"] != nil {
    package.targets.append(
        .executableTarget(name: "SluiceFuzz", dependencies: ["Sluice"], path: "Fuzz/SluiceFuzz"))
}
