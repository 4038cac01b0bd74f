// Time per Action Cable data frame through the JSON parser and the frame decoder, with Foundation's
// JSONSerialization and JSONDecoder measured in the same run as baselines.
//
//     swift run -c release JSONBenchmark [iterations] [case-name filter]
//
// Each case runs 5 times; the best run counts.
import CableReactive
import Dispatch
import Foundation

let iterations = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 200_000
let frame =
    #"{"identifier":"{\"channel\":\"BenchChannel\",\"sub\":3}","message":{"seq":123,"sub":"3","pad":"xxxxxxxxxxxxxxxx"}}"#
let filter = CommandLine.arguments.dropFirst(2).first
let frameData = Data(frame.utf8)

/// Keeps results observable so the optimizer cannot drop the loops.
nonisolated(unsafe) var checksum = 0

@inline(never)
func consume(_ value: Int) {
    checksum &+= value
}

func nanosecondsPerIteration(_ body: () -> Void) -> Double {
    var best = Double.infinity
    for _ in 0..<5 {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start)
        best = min(best, elapsed / Double(iterations))
    }
    return best
}

func report(_ name: String, _ nanoseconds: @autoclosure () -> Double) {
    if let filter, !name.contains(filter) { return }
    let padded = name.padding(toLength: 44, withPad: " ", startingAt: 0)
    print("\(padded) \(String(format: "%8.1f", nanoseconds())) ns/frame")
}

report(
    "JSONValue(parsing:)",
    nanosecondsPerIteration {
        for _ in 0..<iterations {
            if let value = try? JSONValue(parsing: frame), case .object(let object) = value { consume(object.count) }
        }
    }
)

report(
    "CableProtocol.decode",
    nanosecondsPerIteration {
        for _ in 0..<iterations {
            if case .message(_, let message, _) = CableProtocol.decode(frame) { consume(message["seq"]?.intValue ?? 0) }
        }
    }
)

report(
    "JSONValue(parsingUTF8:) on Data",
    nanosecondsPerIteration {
        for _ in 0..<iterations {
            if let value = try? JSONValue(parsingUTF8: frameData), case .object(let object) = value {
                consume(object.count)
            }
        }
    }
)

let message: JSONValue = ["seq": 123, "sub": "3", "pad": "xxxxxxxxxxxxxxxx"]
report(
    "JSONValue.jsonText() of the message",
    nanosecondsPerIteration {
        for _ in 0..<iterations { consume((try? message.jsonText())?.utf8.count ?? 0) }
    }
)

report(
    "baseline: JSONSerialization.jsonObject",
    nanosecondsPerIteration {
        for _ in 0..<iterations {
            if let object = try? JSONSerialization.jsonObject(with: frameData) as? [String: Any] {
                consume(object.count)
            }
        }
    }
)

report(
    "baseline: JSONDecoder -> JSONValue",
    nanosecondsPerIteration {
        let decoder = JSONDecoder()
        for _ in 0..<iterations {
            if let value = try? decoder.decode(JSONValue.self, from: frameData), case .object(let object) = value {
                consume(object.count)
            }
        }
    }
)

print("checksum \(checksum)")
