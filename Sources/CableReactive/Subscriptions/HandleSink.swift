import Signals

/// The client's side of one handle: what the engine publishes to it. It holds the Signals storages themselves
/// (one object and one lock each): the handle only ever hands out views of them.
final class HandleSink: Sendable {
    let id: UInt64
    /// The handle's message stream: the engine sends to it, the handle's ``CableMessages`` observe it.
    let messages: StreamStorage<JSONValue>
    let state: StateStorage<SubscriptionState>
    let reconnect: StateStorage<SubscriptionReconnect?>

    init(id: UInt64, bufferSize: Int, state: SubscriptionState, reconnect: SubscriptionReconnect? = nil) {
        self.id = id
        messages = StreamStorage(holding: .bufferingNewest(bufferSize))
        self.state = StateStorage(state)
        // Every reconnect is news, even one with the outcome of the last: equal values are published again.
        self.reconnect = StateStorage(reconnect, isDuplicate: nil)
    }

    /// A handle the engine lets go of without ending it (the client was released): its loops end.
    deinit { messages.finish() }

    /// Ends the handle: its messages finish and its state becomes unsubscribed (on `callbacks`).
    func end(callbacks: CallbackExecutor) {
        messages.finish()
        let state = state
        callbacks.run { state.update { $0 = .unsubscribed } }
    }
}
