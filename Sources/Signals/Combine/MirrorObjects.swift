#if canImport(Combine)
    import Combine

    /// A signal's latest value as an `ObservableObject`: ``StateMirror`` for iOS 13 to 16, where a view watches
    /// it with `@ObservedObject` (or, from iOS 14, owns it with `@StateObject`; see ``MessagesMirrorObject``).
    ///
    /// ```swift
    /// @MainActor final class RoomModel: ObservableObject {
    ///     let status: StateMirrorObject<CableState>
    ///     init(client: ActionCableClient) { status = StateMirrorObject(client.state) }
    /// }
    /// // In a view: @ObservedObject var status: StateMirrorObject<CableState>; Text("\(status.value)")
    /// ```
    ///
    /// Threading, duplicates and lifetime are those of ``StateMirror``: ``value`` is published on the main actor,
    /// equal values of an `Equatable` type are not published again, and releasing the mirror ends its
    /// observation.
    @available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
    @MainActor
    public final class StateMirrorObject<Value: Sendable>: ObservableObject {
        /// The source's latest value.
        @Published public private(set) var value: Value
        private var observation: SignalObservation?

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

    /// A signal's newest elements as an `ObservableObject`: ``MessagesMirror`` for iOS 13 to 16.
    ///
    /// A view that owns its mirror makes it in `init`, with `StateObject(wrappedValue:)` (a property initializer
    /// cannot read `room`); `@StateObject` needs iOS 14, macOS 11, tvOS 14, watchOS 7:
    ///
    /// ```swift
    /// struct RoomScreen: View {
    ///     @StateObject private var lines: MessagesMirrorObject<ChatLine>
    ///
    ///     init(room: ChannelSubscription) {
    ///         _lines = StateObject(wrappedValue: MessagesMirrorObject(room.messages(as: ChatLine.self), limit: 100))
    ///     }
    ///
    ///     var body: some View { List(lines.latest, id: \.id) { Text($0.text) } }
    /// }
    /// ```
    ///
    /// On iOS 13, something that outlives the view (a view model, the parent) makes and keeps the mirror, and the
    /// view watches it with `@ObservedObject var lines: MessagesMirrorObject<ChatLine>`: an `@ObservedObject` the
    /// view made itself would be made again, empty, each time SwiftUI recreates the view.
    ///
    /// Threading, bounds and lifetime are those of ``MessagesMirror``.
    @available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
    @MainActor
    public final class MessagesMirrorObject<Element: Sendable>: ObservableObject {
        /// The newest elements, oldest first; at most ``limit``.
        public var latest: [Element] { recent.elements }
        /// How many elements ``latest`` keeps.
        public var limit: Int { recent.limit }
        @Published private var recent: RecentElements<Element>
        private var observation: SignalObservation?

        /// Mirrors the newest `limit` elements of `source` (`limit` below 1 is taken as 1).
        public init(_ source: some Signal<Element>, limit: Int = 50) {
            recent = RecentElements(limit: limit)
            observation = source.observe(on: .main, buffering: .bufferingNewest(recent.limit)) { [weak self] in
                self?.recent.append($0)
            }
        }

        /// How many elements the observation dropped because the main queue fell behind.
        public var droppedCount: Int { observation?.droppedCount ?? 0 }

        /// Empties ``latest``; later elements are still added.
        public func removeAll() {
            recent.removeAll()
        }
    }
#endif
