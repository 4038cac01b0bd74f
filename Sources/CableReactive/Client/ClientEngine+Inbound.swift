import Signals

/// The inbound path: what a connection delivers, from its I/O thread.
///
/// Every text message arrives as validated UTF-8 (``TextReceiver``) and is decoded once, outside any lock. A
/// data frame for a known identifier is routed by its raw identifier token from the routes the subscription
/// table last published (not under the engine's lock; loaded once per read, and again after any other frame)
/// and staged in the connection's ``DeliveryBatch``, which hands each subscription its messages once per read;
/// no effect runs for it. A change the app makes meanwhile (a handle joins, the app disconnects) applies from
/// the next read: those messages had arrived before it. Every other frame is an
/// input to the core like an API call: decided under the lock, its effects run after (``ClientEngine/decide(_:)``).
extension ClientEngine {
    /// Connects attempt `id`. The connection keeps the receiver and handler until it delivers `.closed`.
    func openTransport(_ request: CableRequest, id: UInt64) -> any WebSocketConnection {
        let batch = DeliveryBatch(connection: id, turns: self)
        // The data-frame path reads the published routes without the engine, which (weakly referenced) is
        // loaded only for the other frames, not per message.
        let routes = core.withLock { $0.subscriptions.published }
        let receiver = TextReceiver(
            text: { [weak self] utf8 in
                // One decode, its result consumed here: the message moves into the batch without a copy. Its
                // subscription's route, looked up when the decoder reaches the message, says whether to parse
                // it or keep its text for typed consumers (the lookup is kept for routing).
                var lookup: (token: Range<Int>, route: DeliveryRoute??)?
                let frame = CableProtocol.decodeFrame(validatedUTF8: utf8) { token in
                    let route = batch.route(for: UnsafeBufferPointer(rebasing: utf8[token]), on: id, loading: routes)
                    lookup = (token, route)
                    guard case .some(.some(let found)) = route else { return false }
                    return !found.wantsValues
                }
                switch frame {
                case .message(let token, let message, let position)?:
                    let routed = Self.routeDataFrame(
                        token: token, message: message, position: position, utf8: utf8, id: id, batch: batch,
                        routes: routes, looked: lookup.flatMap { $0.token == token ? $0.route : nil })
                    guard !routed else { return }
                    let identifier = CableProtocol.identifier(token: token, in: utf8)
                    let value = message.value  // not kept as text: only a routed message is
                    self?.inbound(
                        identifier.flatMap { identifier in
                            value.map { .message(identifier: identifier, message: $0, position: position) }
                        }, id: id, size: utf8.count, batch: batch)
                case .control(let control)?:
                    self?.inbound(ServerFrame(control), id: id, batch: batch)
                case nil:
                    self?.inbound(nil, id: id, batch: batch)
                }
            },
            batchEnded: { batch.flush() },
            routed: { [log] route in log.emit(.route(route)) },
            pong: { [weak self] in self?.noteFrames(id: id) }  // a check's probe answered
        )
        let protocols = request.offeredSubprotocols(options.wireProtocol.offer)  // AnyCable's token first
        return transport.connect(request: request, protocols: protocols, receiver: receiver) {
            [weak self] event in
            self?.transportEvent(event, id: id, batch: batch)
        }
    }

    private func transportEvent(_ event: WebSocketEvent, id: UInt64, batch: DeliveryBatch) {
        switch event {
        case .opened(let chosen):
            // A server that knows none of our protocols answers with the sentinel we offer last. No protocol
            // at all is accepted: Rails answers that way to a client that offers none it knows, and so does
            // AnyCable; both then speak plain Action Cable.
            if chosen == CableWireProtocol.unsupportedSentinel {
                handle(.machine(.unsupportedProtocol(id: id)))
            } else if chosen == CableWireProtocol.anyCableExtended.name, options.wireProtocol == .anyCableExtended {
                core.withLock { $0.restore.handle(.extendedHandshake(id: id)) }
            }
        case .text:
            break  // handed to the receiver
        case .closed(let info):
            batch.flush()
            var unauthorized = false
            if case .failed(let error) = info, let status = error.httpStatus, status == 401 || status == 403 {
                unauthorized = true
            }
            decide { core, now in
                core.outbox.append(.log(Self.closeLog(info)))
                core.decide(.machine(.transportClosed(id: id, unauthorized: unauthorized, info: info)), now: now)
            }
        }
    }

    private static func closeLog(_ info: WebSocketCloseInfo) -> LogEvent {
        switch info {
        case .closed(let code, _):
            LogEvent(level: .info, name: "transport_closed", fields: [.closeCode(code.rawValue)])
        case .failed(let error):
            LogEvent(level: .info, name: "transport_failed", fields: [.errorType(error.kind.name)])
        }
    }

    /// The hot path for a data frame decoded from the validated UTF-8 `utf8`: a lookup of the identifier's raw
    /// token in the published routes (``RouteIndex``), then the message is staged for its subscription
    /// (``DeliveryBatch``). Returns false when the frame is left to ``inbound(_:id:batch:)`` (an identifier token
    /// we do not know, which may be one escaped differently). `looked` is the lookup of this token made while
    /// decoding, if one was.
    private static func routeDataFrame(
        token range: Range<Int>, message: MessageJSON, position: StreamPosition?, utf8: UnsafeBufferPointer<UInt8>,
        id: UInt64, batch: DeliveryBatch, routes: Locked<SubscriptionTable.Routes>, looked: DeliveryRoute???
    ) -> Bool {
        let token = UnsafeBufferPointer(rebasing: utf8[range])
        // The arrival time is noted once per read, at its end (noteFrames), not per message.
        guard let found = looked ?? batch.route(for: token, on: id, loading: routes) else {
            return true  // not the live session: dropped
        }
        guard let route = found else {
            return false  // inbound logs an unknown identifier, or finds one escaped differently
        }
        batch.routedFrames = true
        route.stage(message, at: position, size: utf8.count, in: batch)
        return true
    }

    /// Notes that the live connection `id` received frames now (the stale watchdog's clock).
    private func noteFrames(id: UInt64) {
        let now = scheduler.now
        core.withLock { _ = $0.machine.noteFrame(id: id, now: now) }
    }

    /// Any frame but a routed data frame (of `size` bytes): an input to the core; a data frame or a replay's
    /// end it resolves to a subscription is staged after.
    private func inbound(_ decoded: ServerFrame?, id: UInt64, size: Int = 0, batch: DeliveryBatch) {
        guard let frame = decoded else {
            noteFrames(id: id)
            log.emit(LogEvent(level: .debug, name: "bad_frame", fields: []))
            return
        }
        defer { batch.routes = nil }  // the decision may have moved routes: the next data frame reloads them
        // What came before the frame reaches the consumers before what the frame decides (a state, an outcome).
        if batch.hasStaged { batch.handOverStaged() }
        guard let route = decide({ core, now in core.received(frame, on: id, now: now) }) else { return }
        switch frame {
        case .message(_, let message, let position):
            route.stage(.value(message), at: position, size: size, in: batch)
        case .historyConfirmed, .historyRejected:
            // What waited for the replay goes out after it, in stream order.
            for ready in subscriptions.historyEnded(route.serial) {
                batch.stage(ready.value, at: ready.position, for: route)
            }
        case .confirm, .reject, .welcome, .ping, .pong, .disconnect, .presence, .unknown:
            break  // `received` resolves no subscription for these
        }
    }
}
