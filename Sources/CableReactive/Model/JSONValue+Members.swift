#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

// Here, not with JSONValue's Codable conformance in JSON: it throws CableError, and JSON is below Model (DESIGN.md).
extension JSONValue {
    /// Each value of `members` encoded on its own with `encoder`: what the dictionary forms of `subscribe` and
    /// `perform` take. A ``JSONValue`` member is taken as it is.
    ///
    /// - Throws: ``CableError`` `unencodableData`, naming the member (and the path inside it) that did not
    ///   encode.
    static func encodingEach(
        _ members: [String: any Encodable & Sendable], encoder: JSONEncoder
    ) throws(CableError) -> [String: JSONValue] {
        var object: [String: JSONValue] = [:]
        object.reserveCapacity(members.count)
        for (key, value) in members {
            do {
                object[key] = try value as? JSONValue ?? JSONValue(encoding: value, encoder: encoder)
            } catch {
                throw CableError.unencodableData(error, under: [MemberKey(stringValue: key)])
            }
        }
        return object
    }
}
