import Testing

/// The root of every integration suite. Serialized: the suites share servers, and some restart them or count
/// the process's threads and descriptors. Disabled unless `Scripts/test.d/50-rails-integration` set the
/// environment; that script fails when any of these tests did not run (see README.md).
@Suite(.serialized, .enabled(if: Env.isConfigured), .timeLimit(.minutes(3)))
struct IntegrationTests {}
