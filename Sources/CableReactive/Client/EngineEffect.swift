#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the engine does after deciding: every call into code the app provides or injects (the transport and
/// its connections, the scheduler, the hooks, the callback queue, the logger, observers of ended handles).
///
/// Effects are decided under the engine's lock, appended to one FIFO in the same critical section, and run
/// after unlocking by whichever thread finds the FIFO idle (``ClientEngine``'s `drain`), one at a time, in
/// decision order. So no lock of the client is held while app code runs, code that calls back into the
/// client from inside an effect (an inline scheduler, an observer, a transport that delivers from `send`)
/// only appends to the FIFO, and the wire and the callback queue see commands in the order they were decided.
enum EngineEffect: Sendable {
    /// Open the transport for attempt `id` with the prepared request.
    case connect(id: UInt64, CableRequest)
    /// Send `text` on attempt `attempt`'s connection, if it is still the open one.
    case send(String, attempt: UInt64)
    /// Close attempt `attempt`'s connection, if it is open.
    case closeTransport(attempt: UInt64)
    /// Send a WebSocket ping on attempt `attempt`'s connection, if it is still the open one (a check's probe).
    case ping(attempt: UInt64)
    /// Arm the machine's timer `kind` for attempt `id` (replacing the armed one of that kind).
    case armTimer(ConnectionMachine.TimerKind, id: UInt64, after: TimeInterval)
    case cancelTimer(ConnectionMachine.TimerKind)
    /// Arm the one subscribe re-send timer for `deadline` (scheduler time), or cancel it (`nil`).
    case armRetries(deadline: TimeInterval?)
    /// Run `onRequest` on the prepared request of attempt `id` (cancelling any running hook).
    case runRequestHook(id: UInt64, CableRequest)
    /// Run `onUnauthorized` for refresh `id` (cancelling any running hook).
    case runUnauthorizedHook(id: UInt64)
    case cancelHook
    /// Write the client's or its subscriptions' values (states, reconnect outcomes, presence), here, in the
    /// FIFO's order, so that they are written in decision order with the messages handed over in the FIFO's turns
    /// (``ClientEngine``'s delivery turn). Their observers run on their lanes (the callback queue, or the queue
    /// they name), never here; a loop waiting on one is resumed.
    case publish(@Sendable () -> Void)
    /// Hand messages a read staged to their subscriptions' buffers, in this turn: the I/O thread found another
    /// thread running effects and left them to it (``DeliveryBatch``).
    case handOver(StagedDelivery)
    /// End handles for good: their messages finish (observers may run) and their state becomes unsubscribed.
    case end([HandleSink])
    case log(LogEvent)
}
