// TEMPORARY stand-ins until the JSON branch lands; replaced at merge.
import Foundation

public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

enum ServerFrame: Equatable, Sendable {
    case welcome
    case ping
    case confirm(identifier: String)
    case reject(identifier: String)
    case disconnect(reason: String?, reconnect: Bool?)
    case message(identifier: String, message: JSONValue)
    case unknown
}

enum CableProtocol {
    static func decode(_ text: String) -> ServerFrame? { nil }
    static func subscribe(identifier: String) -> String { "" }
    static func unsubscribe(identifier: String) -> String { "" }
    static func perform(identifier: String, action: String, data: JSONValue) throws -> String { "" }
    static func identifier(for params: JSONValue) throws -> String { "" }
}

public struct CableError: Error, Hashable, Sendable {
    public enum Code: Hashable, Sendable {
        case invalidURL
        case invalidOption(String)
        case missingChannel
        case unencodableData
        case dataNotObject
        case duplicateSubscription
    }
    public var code: Code
    public static func invalidOption(_ name: String) -> CableError { CableError(code: .invalidOption(name)) }
    public static let invalidURL = CableError(code: .invalidURL)
    public static let duplicateSubscription = CableError(code: .duplicateSubscription)
}

extension JSONValue {
    init(encoding value: some Encodable) throws { self = .null }
    func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T { throw CableError.invalidURL }
}
extension JSONValue: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
}
