/// `text` cut to `limit` characters, with every character other than an ASCII letter, digit, `_` or one of `extra`
/// replaced by `?`: app or server text that a log line or an error may carry without breaking its `key=value` shape
/// or leaking anything but names. A file of its own, free of the logger, so that the JSON fuzzer compiles it.
func loggableText(_ text: String, limit: Int, extra: String = "") -> String {
    String(
        text.unicodeScalars.prefix(limit).map { scalar -> Character in
            switch scalar.value {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x5F: Character(scalar)
            default: extra.unicodeScalars.contains(scalar) ? Character(scalar) : "?"
            }
        })
}
