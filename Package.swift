// swift-tools-version: 6.0
// NB: the platforms are the oldest that URLSessionWebSocketTask supports. Nothing here may use
// Synchronization.Mutex/Atomic (iOS 18); the package has its own `Locked` wrapper instead.
import PackageDescription

let package = Package(
    name: "CableReactive",
    platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v6), .visionOS(.v1)],
    products: [
        .library(name: "Signals", targets: ["Signals"]),
        .library(name: "CableReactive", targets: ["CableReactive"]),
        // CablePreview: for SwiftUI previews and view-model tests; an app target may link it (no test code).
        .library(name: "CableReactivePreview", targets: ["CableReactivePreview"]),
        .library(name: "CableTesting", targets: ["CableTesting"]),
    ],
    targets: [
        .target(name: "Signals"),
        // OpenSSL's headers (Debian: libssl-dev) and a loader: libssl is opened on the first wss:// attempt,
        // not linked (see its header). Empty on other platforms.
        .target(name: "CCableReactiveOpenSSL", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        .systemLibrary(name: "CCableReactiveZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "CableReactive",
            dependencies: [
                "Signals",
                .target(name: "CCableReactiveOpenSSL", condition: .when(platforms: [.linux])),
                .target(name: "CCableReactiveZlib", condition: .when(platforms: [.linux])),
            ]
        ),
        .target(name: "CableReactivePreview", dependencies: ["CableReactive", "Signals"]),
        .target(name: "CableTesting", dependencies: ["CableReactive", "CableReactivePreview", "Signals"]),
        .testTarget(name: "SignalsTests", dependencies: ["Signals"]),
        // LatencyHistogram's buckets and LatencySummary's text, which js/cable-latency.js and floor/cable-floor.c
        // repeat.
        .testTarget(name: "BenchSupportTests", dependencies: ["BenchSupport"]),
        // Links libcrypto itself: SHA1Tests checks our SHA-1 against OpenSSL's (the library only loads OpenSSL).
        .testTarget(
            name: "CableReactiveTests",
            dependencies: ["CableReactive", "CableReactivePreview", "CableTesting", "Signals"],
            linkerSettings: [.linkedLibrary("crypto", .when(platforms: [.linux]))]
        ),
        // Issue 23: the code a SwiftUI app writes (`@Observable` models next to `import Signals`, `@MainActor`
        // observers, mirrors, typed channels, previews), compiled in Swift 6 mode with warnings as errors, and run.
        .testTarget(
            name: "AppTests",
            dependencies: [
                "CableReactive", "CableReactivePreview", "CableTesting", "Signals", "SignalsChat", "SwiftUIChat",
            ]
        ),
        // LocalCableServer against the real client, raw sockets and hostile bytes; SHA-1 vectors.
        .testTarget(name: "CableTestingTests", dependencies: ["CableReactive", "CableTesting", "Signals"]),
        // Runs SocketTransport against a real, independent peer (Python `websockets`, see
        // Tests/Fixtures/wspeer), raw peers, LocalCableServer for slow uplinks, and child processes; needs the venv
        // from Scripts/install-deps and the `openssl` CLI.
        .testTarget(
            name: "TransportIntegrationTests",
            dependencies: ["CableReactive", "CableTesting", "Signals", "exit-during-connect"],
            exclude: ["README.md"]
        ),
        // A child process of TransportIntegrationTests: exits while TLS connections are being set up.
        .executableTarget(
            name: "exit-during-connect",
            dependencies: ["CableReactive"],
            path: "Tests/Fixtures/exit-during-connect"
        ),
        // The client against the real Rails fixture server, redis and the fault proxy; public API only.
        // Disabled unless Scripts/test.d/50-rails-integration started the servers (see its README).
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["CableReactive", "Signals"],
            exclude: ["README.md"]
        ),
        .executableTarget(
            name: "SignalsBenchmark",
            dependencies: ["Signals"],
            path: "Benchmarks/SignalsBenchmark"
        ),
        .executableTarget(
            name: "TransportBenchmark",
            dependencies: ["BenchSupport", "CableReactive"],
            path: "Benchmarks/TransportBenchmark"
        ),
        .executableTarget(
            name: "JSONBenchmark",
            dependencies: ["CableReactive"],
            path: "Benchmarks/JSONBenchmark"
        ),
        // Loopback Action Cable sender and socket helpers shared by the client benchmarks.
        .target(name: "BenchSupport", dependencies: ["CableReactive", "Signals"], path: "Benchmarks/BenchSupport"),
        .executableTarget(name: "CableBench", dependencies: ["BenchSupport"], path: "Benchmarks/CableBench"),
        .executableTarget(
            name: "CableBenchServer",
            dependencies: ["BenchSupport"],
            path: "Benchmarks/CableBenchServer"
        ),
        // The drivers' Foundation-using helpers (the C floor's compilation, reading a child's lines); never a
        // dependency of CableBench, CableBenchServer or BenchSupport, which must not load Foundation.
        .target(name: "BenchHost", path: "Benchmarks/BenchHost"),
        // CableBench next to the official Rails JS client under node and the C floor, against CableBenchServer
        // (see its header).
        .executableTarget(
            name: "SideBySideBenchmark",
            dependencies: ["BenchHost"],
            path: "Benchmarks/SideBySideBenchmark"
        ),
        // Per-message latency and CPU per message: CableBench's latency mode next to Benchmarks/js/cable-latency.js
        // and the C floor's latency mode, against CableBenchServer's paced mode (see its header).
        .executableTarget(
            name: "LatencyBenchmark",
            dependencies: ["BenchHost"],
            path: "Benchmarks/LatencyBenchmark"
        ),
        .executableTarget(
            name: "CableBenchmark",
            dependencies: ["BenchSupport", "CableReactive"],
            path: "Benchmarks/CableBenchmark"
        ),
        // Issue 12: RSS, threads and descriptors of idle clients (ClientFootprint), against a LocalCableServer in
        // its own process (FootprintServer), so that the measured process does not load Foundation.
        .executableTarget(
            name: "FootprintServer",
            dependencies: ["CableTesting", "CableReactive"],
            path: "Benchmarks/FootprintServer"
        ),
        .executableTarget(
            name: "ClientFootprint",
            dependencies: ["BenchSupport", "CableReactive", "Signals"],
            path: "Benchmarks/ClientFootprint"
        ),
        // Issue 27: one client through faults and bursts for minutes; fails if RSS, threads or descriptors grow.
        .executableTarget(
            name: "SoakBenchmark",
            dependencies: ["BenchSupport", "CableReactive", "Signals"],
            path: "Benchmarks/SoakBenchmark"
        ),
        // Playgrounds-linux: runnable examples (`swift run Chat`, …), each against an embedded LocalCableServer;
        // Scripts/test.d/70-playgrounds runs them. ReadmeSnippets holds the README's code, compiled.
        .target(
            name: "ExampleSupport",
            dependencies: ["CableReactive", "CableTesting", "Signals"],
            path: "Playgrounds-linux/ExampleSupport"
        ),
        .target(
            name: "ReadmeSnippets",
            dependencies: ["CableReactive", "Signals"],
            path: "Playgrounds-linux/ReadmeSnippets"
        ),
    ]
        + [
            // The README's SwiftUI app: the view model runs on Linux against LocalCableServer (main.swift); its
            // view and preview (ChatScreen.swift) compile on Apple platforms only.
            .executableTarget(
                name: "SwiftUIChat",
                dependencies: ["CableReactive", "CableReactivePreview", "CableTesting", "ExampleSupport", "Signals"],
                path: "Playgrounds-linux/SwiftUIChat"
            )
        ]
        + [
            "Chat", "GatedConnect", "TokenRefresh", "TypedChannel", "ReconnectDemo", "SeamlessReconnect",
            "SignalsChat",
        ].map { name in
            .executableTarget(
                name: name,
                dependencies: ["CableReactive", "CableTesting", "ExampleSupport", "Signals"],
                path: "Playgrounds-linux/\(name)"
            )
        },
    swiftLanguageModes: [.v6]
)
