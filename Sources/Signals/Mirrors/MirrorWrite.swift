/// Whether a mirror should write `new` over `current`: not when `Value` is `Equatable` and they are equal, so that a
/// view is not invalidated for nothing (a state replays its current value to a new observer, and may be set to what
/// it holds). The one rule of ``StateMirror`` and `StateMirrorObject`.
func mirrorShouldWrite<Value>(_ new: Value, over current: Value) -> Bool {
    guard let type = Value.self as? any Equatable.Type else { return true }
    return !type.areEqual(new, current)
}

extension Equatable {
    /// Whether `a` and `b` are equal values of this type (the conformance of a generic `Value`, found at run time).
    fileprivate static func areEqual(_ a: Any, _ b: Any) -> Bool {
        guard let a = a as? Self, let b = b as? Self else { return false }
        return a == b
    }
}
