import CableReactive
import Foundation

extension LocalCableServer {
    /// An AnyCable signed stream name, as Rails' `signed_stream_name` and `AnyCable::Streams.signed` make it:
    /// the stream name as a JSON string, Base64 (standard alphabet, padded), `--`, and the lowercase hex
    /// HMAC-SHA256 of that Base64 text under `secret`. `<`, `>`, `&`, U+2028 and U+2029 are escaped in the JSON
    /// (`\u003c`…), as Go's `json.Marshal` and ActiveSupport's `to_json` write them.
    ///
    /// ```swift
    /// LocalCableServer.signedStreamName("chat:2021", secret: "s3Krit")
    /// // ImNoYXQ6MjAyMSI=--f9ee45dbccb1da04d8ceb99cc820207804370ba0d06b46fc3b8b373af1315628
    /// ```
    public static func signedStreamName(_ name: String, secret: String) -> String {
        var json = ""
        for character in JSONValue.string(name).description.unicodeScalars {
            switch character {
            case "<": json += "\\u003c"
            case ">": json += "\\u003e"
            case "&": json += "\\u0026"
            case "\u{2028}": json += "\\u2028"
            case "\u{2029}": json += "\\u2029"
            default: json.unicodeScalars.append(character)
            }
        }
        let encoded = Data(json.utf8).base64EncodedString()
        return encoded + "--" + HMACSHA256.hex(HMACSHA256.mac(key: Array(secret.utf8), message: Array(encoded.utf8)))
    }

    /// With ``Options/pubSub``: sends `message` to every subscription of the stream `name` (the `$pubsub` and
    /// Turbo subscriptions of that plain name; an ordinary subscription's stream is its identifier), each as
    /// `{"identifier":<its identifier>,"message":…}`. With ``Options/reliableStreams`` it carries `stream_id`
    /// (`name`), `epoch` and `offset` and is kept for history, also when nobody is subscribed, like every
    /// broadcast. Returns once queued on the sockets (see the type's Threading section).
    ///
    /// ```swift
    /// server.broadcast(["text": "hi"], toStream: "chat/42")
    /// ```
    public func broadcast(_ message: JSONValue, toStream name: String) {
        core.perform(.broadcast(message, .stream(name)))
    }
}
