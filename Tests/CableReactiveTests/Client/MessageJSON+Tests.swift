@testable import CableReactive

// Messages as the delivery tests write them: `batch.stage(1, for: route)`, `sequencer.accept(.int(4), at: …)`.
extension MessageJSON: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .value(.string(value)) }
    public init(integerLiteral value: Int) { self = .value(.int(value)) }
}

extension MessageJSON {
    static func int(_ number: Int) -> MessageJSON { .value(.int(number)) }
    var intValue: Int? { value?.intValue }
}
