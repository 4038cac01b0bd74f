// Shared plumbing for the runnable examples: argument parsing, output, and a deadline, so that each
// example's main.swift shows only CableReactive code.

import CableReactive
import CableTesting
import Foundation
import Signals

/// Prints one line at once (stdout may be a pipe when the test script runs the examples), and records it for
/// ``said(_:within:)``.
public func say(_ line: String) {
    print(line)
    fflush(nil)  // all streams: also what `print` buffered
    transcript.value.append(line)
}

/// Every line said so far, as a signal to wait on.
private let transcript = MutableStateValue<[String]>([], isDuplicate: nil)

/// Waits until a line equal to `line` has been said since the last call (observers print on the client's
/// callback queue, the example's steps on its own task: a step waits for what the observers show before it says
/// the next one, so the output has one order). Throws ``ExampleError`` after `timeout` seconds.
public func said(_ line: String, within timeout: TimeInterval = 10) async throws {
    let start = heard.withLock { $0 }
    let found = await transcript.first(within: timeout) { lines in
        lines.count > start && lines[start...].contains(line)
    }
    guard let lines = found, let index = lines[start...].firstIndex(of: line) else {
        throw ExampleError("no line \"\(line)\" within \(Int(timeout)) s")
    }
    heard.withLock { $0 = index + 1 }
}

/// How many lines of the transcript ``said(_:within:)`` has passed.
private let heard = Locked(0)

/// The value after `--name` on the command line, if any.
public func argument(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

/// Runs an example: `body`, bounded by `timeout` seconds; exits 0 when it returns, 1 when it throws or the
/// time runs out.
public func runExample(timeout: TimeInterval = 30, _ body: @escaping @Sendable () async throws -> Void) async -> Never {
    let outcome = await withTaskGroup(of: String?.self) { group in
        group.addTask {
            do {
                try await body()
                return nil
            } catch {
                return "failed: \(error)"
            }
        }
        group.addTask {
            try? await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
            return Task.isCancelled ? nil : "timed out after \(Int(timeout)) s"
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
    if let outcome {
        say(outcome)
        exit(1)
    }
    exit(0)
}

/// Waits on the main actor, letting the main queue run (a view model's `observe(on: .main)` observers), until
/// `condition` holds; throws ``ExampleError`` after 10 s. For examples that check a view model's properties.
@MainActor
public func until(_ what: String, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(10)
    while !condition() {
        guard Date() < deadline else { throw ExampleError("no \(what) within 10 s") }
        try await Task.sleep(nanoseconds: 5_000_000)
    }
}

/// The error an example throws when something it waits for does not happen.
public struct ExampleError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension Signal {
    /// Waits up to `timeout` seconds for a value matching `predicate`; throws ``ExampleError`` otherwise.
    public func expect(
        _ what: String, within timeout: TimeInterval = 10, where predicate: @escaping @Sendable (Element) -> Bool
    ) async throws -> Element {
        guard let value = await first(within: timeout, where: predicate) else {
            throw ExampleError("no \(what) within \(Int(timeout)) s")
        }
        return value
    }
}

extension StateValue where Value == CableState {
    /// Waits until the client is connected.
    public func connected(within timeout: TimeInterval = 10) async throws {
        _ = try await expect("connection", within: timeout) { $0 == .connected }
    }
}

extension StateValue where Value == SubscriptionState {
    /// Waits until the subscription is confirmed.
    public func subscribed(within timeout: TimeInterval = 10) async throws {
        _ = try await expect("confirmation", within: timeout) { state in
            if case .subscribed = state { return true }
            return false
        }
    }
}

/// An embedded server that behaves like the chat channel of the Rails fixture (Tests/Fixtures/rails):
/// `speak` broadcasts `{"user", "room", "text"}` to everyone in the room.
public func makeChatServer() throws -> LocalCableServer {
    let server = try LocalCableServer()
    server.onPerform("speak") { call in
        let user = call.request.queryValue("user") ?? "anonymous"
        call.broadcast(["user": .string(user), "room": call.params["room"] ?? "lobby", "text": call.data["text"] ?? ""])
    }
    return server
}
