// The Combine side of the operator rows, on Apple platforms only (Operators.swift says what each row measures).
//
// Only APIs of macOS 10.15 / iOS 13. CI runs on Linux, where this file compiles to nothing: it has never been
// compiled here, so keep it small. The time operators run on a serial `DispatchQueue`, which Combine delivers
// their values on; each run ends once that queue has run what was scheduled on it at the end (debounce,
// throttle, timeout) or once the completion has arrived (delay). Combine has no `withLatestFrom`.
// Scripts/check-availability reads this file: every Combine name here is in its API_TABLE or declared by the
// package too (`zip`, `debounce`, `seconds`, ...), except `PassthroughSubject`, which needs a table entry.
#if canImport(Combine)
    import Combine
    import Dispatch

    extension Operator {
        /// The Combine pipeline for this row, or nil where Combine has none.
        func combine(_ count: Int) -> (() -> Measured)? {
            switch self {
            case .zip:
                return { combineZip(count) }
            case .withLatestFrom:
                return nil
            case .switchToLatest:
                return { combineSwitchToLatest(count) }
            case .prepend:
                return { combinePrepend(count) }
            case .debounce:
                return {
                    let (input, queue) = timedInput()
                    return combineTimed(count, input, queue, input.debounce(for: .seconds(3600), scheduler: queue))
                }
            case .throttle:
                return {
                    let (input, queue) = timedInput()
                    return combineTimed(
                        count, input, queue, input.throttle(for: .seconds(3600), scheduler: queue, latest: true))
                }
            case .delay:
                return { combineDelay(count) }
            case .timeout:
                return {
                    let (input, queue) = timedInput()
                    return combineTimed(count, input, queue, input.timeout(.seconds(3600), scheduler: queue))
                }
            }
        }
    }

    private func combineZip(_ count: Int) -> Measured {
        let a = PassthroughSubject<Int, Never>()
        let b = PassthroughSubject<Int, Never>()
        let tally = Tally()
        let cancellable = a.zip(b).sink { pair in tally.add(pair.0 &+ pair.1) }
        defer { cancellable.cancel() }
        return measure(tally) {
            for value in 0..<count {
                a.send(value)
                b.send(value)
            }
        }
    }

    private func combineSwitchToLatest(_ count: Int) -> Measured {
        // `Error`, not `Never`: with `Never` at both levels the most specific `switchToLatest()` is an overload
        // of iOS 14 / macOS 11, which the call may resolve to; with `Error` only the iOS 13 / macOS 10.15 one
        // applies.
        let outer = PassthroughSubject<PassthroughSubject<Int, Error>, Error>()
        let tally = Tally()
        let cancellable = outer.switchToLatest()
            .sink(receiveCompletion: { _ in }, receiveValue: { value in tally.add(value) })
        defer { cancellable.cancel() }
        return measure(tally) {
            for start in stride(from: 0, to: count, by: switchEvery) {
                let inner = PassthroughSubject<Int, Error>()
                outer.send(inner)
                for value in start..<min(start + switchEvery, count) { inner.send(value) }
                inner.send(completion: .finished)
            }
            outer.send(completion: .finished)
        }
    }

    private func combinePrepend(_ count: Int) -> Measured {
        let live = PassthroughSubject<Int, Never>()
        let history = Array(0..<prependCount)
        let tally = Tally()
        return measure(tally) {
            for _ in 0..<count / (2 * prependCount) {
                let cancellable = live.prepend(history).sink { value in tally.add(value) }
                for value in prependCount..<2 * prependCount { live.send(value) }
                cancellable.cancel()
            }
        }
    }

    /// A time operator's input, and the serial queue it schedules on.
    private func timedInput() -> (PassthroughSubject<Int, Never>, DispatchQueue) {
        (PassthroughSubject<Int, Never>(), DispatchQueue(label: "SignalsBenchmark.combine"))
    }

    /// `count` values into `input`, then its end, then what `queue` had to run at once by then.
    private func combineTimed<Pipeline: Publisher>(
        _ count: Int,
        _ input: PassthroughSubject<Int, Never>,
        _ queue: DispatchQueue,
        _ pipeline: Pipeline
    ) -> Measured where Pipeline.Output == Int, Pipeline.Failure == Never {
        let tally = Tally()
        let cancellable = pipeline.sink { value in tally.add(value) }
        defer { cancellable.cancel() }
        let drained = DispatchSemaphore(value: 0)
        return measure(tally) {
            for value in 0..<count { input.send(value) }
            input.send(completion: .finished)
            queue.async { drained.signal() }  // after the values and the end that Combine scheduled on the queue
            drained.wait()
        }
    }

    private func combineDelay(_ count: Int) -> Measured {
        let input = PassthroughSubject<Int, Never>()
        let queue = DispatchQueue(label: "SignalsBenchmark.combine")
        let tally = Tally()
        let done = DispatchSemaphore(value: 0)
        let cancellable = input.delay(for: .seconds(0.001), scheduler: queue)
            .sink(receiveCompletion: { _ in done.signal() }, receiveValue: { value in tally.add(value) })
        defer { cancellable.cancel() }
        return measure(tally) {
            for value in 0..<count { input.send(value) }
            input.send(completion: .finished)
            done.wait()
        }
    }
#endif
