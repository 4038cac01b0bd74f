import Signals

/// The client's source of time: Signals' `SignalScheduler`, under the name the client's API has
/// always used. One notion of time in the package: the client's timers and Signals' time operators run on
/// the same schedulers (`DispatchScheduler` in an app, `ManualScheduler`, which is Signals'
/// `VirtualTimeScheduler`, in tests), and code written against `CableScheduler` compiles unchanged.
///
/// ```swift
/// let client = try ActionCableClient(url: url, scheduler: DispatchScheduler())
/// ```
public typealias CableScheduler = SignalScheduler

/// Signals' `DispatchScheduler`, so that an app that imports only CableReactive can name it.
public typealias DispatchScheduler = Signals.DispatchScheduler

/// Signals' `ScheduledWork`, so that an app that imports only CableReactive can name it.
public typealias ScheduledWork = Signals.ScheduledWork
