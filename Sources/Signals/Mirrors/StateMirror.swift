#if canImport(Observation)
    import Observation

    /// A signal's latest value as an `@Observable` property: what a SwiftUI view reads from a view model.
    ///
    /// ```swift
    /// @MainActor @Observable final class RoomModel {
    ///     let status: StateMirror<CableState>
    ///     init(client: ActionCableClient) { status = StateMirror(client.state) }
    /// }
    /// // In a view: Text("\(model.status.value)")
    /// ```
    ///
    /// Threading: ``value`` is set on the main actor, through the main queue, in the order the source sent its
    /// values. Equal values are not written again when `Value` is `Equatable`, so views are not invalidated for
    /// nothing. Lifetime: the mirror keeps its observation, which keeps the source alive (a subscription's state
    /// keeps the subscription, as any observation of it does) but never the client; releasing the mirror (with
    /// the view model that holds it) ends the observation.
    ///
    /// For iOS 13 to 16, `StateMirrorObject` (where Combine exists) is the same mirror as an `ObservableObject`.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor
    @Observable
    public final class StateMirror<Value: Sendable> {
        /// The source's latest value.
        public private(set) var value: Value
        @ObservationIgnored private var observation: SignalObservation?

        /// Mirrors `source`, starting from `initial` until its first value arrives. When `Value` is `Equatable`, a
        /// value equal to the current one is not written again.
        public init(_ source: some Signal<Value>, initial: Value) {
            value = initial
            observation = source.observe(on: .main) { [weak self] value in
                guard let self, mirrorShouldWrite(value, over: self.value) else { return }
                self.value = value
            }
        }

        /// Mirrors `state`, starting from its current value.
        public convenience init(_ state: StateValue<Value>) {
            self.init(state, initial: state.value)
        }
    }

    /// A signal's newest elements (a subscription's latest messages, say) as an `@Observable` list, bounded.
    ///
    /// ```swift
    /// @MainActor @Observable final class RoomModel {
    ///     let lines: MessagesMirror<ChatChannel.Message>
    ///     init(room: ChannelSubscription) { lines = MessagesMirror(room.messages(as: ChatChannel.Message.self)) }
    /// }
    /// // In a view: List(model.lines.latest, id: \.id) { Text($0.text) }
    /// ```
    ///
    /// Threading: ``latest`` changes on the main actor, through the main queue, in arrival order. The
    /// observation buffers at most `limit` elements while the main queue is busy (the oldest are dropped
    /// first, and counted in ``droppedCount``), so a burst never grows memory past the list itself.
    /// Lifetime: as ``StateMirror``: the mirror keeps the subscription (it observes its messages), never the
    /// client, and releasing the mirror ends the observation. Messages that arrived before the mirror was made
    /// are held for it as for any first consumer (see the messages' documentation).
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor
    @Observable
    public final class MessagesMirror<Element: Sendable> {
        /// The newest elements, oldest first; at most ``limit``.
        public var latest: [Element] { recent.elements }
        /// How many elements ``latest`` keeps.
        public var limit: Int { recent.limit }
        private var recent: RecentElements<Element>
        @ObservationIgnored private var observation: SignalObservation?

        /// Mirrors the newest `limit` elements of `source` (`limit` below 1 is taken as 1).
        public init(_ source: some Signal<Element>, limit: Int = 50) {
            recent = RecentElements(limit: limit)
            observation = source.observe(on: .main, buffering: .bufferingNewest(recent.limit)) { [weak self] in
                self?.recent.append($0)
            }
        }

        /// How many elements the observation dropped because the main queue fell behind.
        public var droppedCount: Int { observation?.droppedCount ?? 0 }

        /// Empties ``latest`` (a "clear" button, or a reload after a reconnect that may have missed messages); later elements
        /// are still added.
        public func removeAll() {
            recent.removeAll()
        }
    }
#endif
