/// The part of a `DecodingError` that a log line may carry: where decoding failed, as a key path.
///
/// Coding keys are the names of the app's own properties, but a dictionary's keys come from the message, so
/// every key is reduced to safe characters (ASCII letters, digits and `_`; anything else becomes `?`) and cut
/// to 32 characters, and the path to its last 8 components. Indexes print as `[n]`. Values never appear.
enum DecodingFailure {
    static let maxComponents = 8
    static let maxKeyLength = 32

    /// `user.rooms[2].name`, or nil when the error has no path (or is not a `DecodingError`).
    static func keyPath(of error: any Error) -> String? {
        let path: [any CodingKey]
        switch error as? DecodingError {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            path = context.codingPath
        case .keyNotFound(let key, let context):
            path = context.codingPath + [key]
        case nil:
            return nil
        @unknown default:
            return nil
        }
        return keyPath(path)
    }

    /// `path` as `user.rooms[2].name`, each key reduced to safe characters; nil when it is empty. Encoding
    /// failures use it too (``EncodingFailure``).
    static func keyPath(_ path: [any CodingKey]) -> String? {
        guard !path.isEmpty else { return nil }
        var rendered = ""
        for key in path.suffix(maxComponents) {
            if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == "\(index)" {
                rendered += "[\(index)]"
            } else {
                if !rendered.isEmpty { rendered += "." }
                rendered += loggableText(key.stringValue, limit: maxKeyLength)
            }
        }
        return (path.count > maxComponents ? "…" : "") + rendered
    }
}
