import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

@testable import CableReactive

/// Which form a message travels in (``MessageJSON``): kept as the server's text while every consumer of its
/// subscription is typed, parsed into a value once one reads values; either form reaches either consumer.
@Suite("ActionCableClient: messages as text for typed consumers, as values for untyped ones")
struct MessageFormTests {
    struct Line: Decodable, Sendable, Equatable {
        let n: Int
        let text: String?
    }

    static let params: JSONValue = ["channel": "RoomChannel"]

    /// What the subscription's stream holds, in the forms it holds them: a consumer of the storage itself, which
    /// neither reads values nor decodes.
    static func forms(_ room: ChannelSubscription) -> PullConsumer<MessageJSON> {
        PullConsumer(room.messages.storage, buffering: .bufferingNewest(64), keeping: nil)
    }

    /// What `consumer` holds, each message as its form and its JSON (`MessageJSON`'s `==` compares values only).
    static func drain(_ consumer: PullConsumer<MessageJSON>) -> [String] {
        var taken: [String] = []
        while case .element(let message) = consumer.box.poll() {
            switch message {
            case .text(let utf8): taken.append("text " + String(decoding: utf8, as: UTF8.self))
            case .value(let value): taken.append("value \(value)")
            }
        }
        return taken
    }

    @Test("with typed consumers alone, a message stays the server's text and decodes from it")
    func typedAlone() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(Self.params)
        let connection = try #require(h.connected())
        var typed = room.messages(as: Line.self).makeAsyncIterator()
        let forms = Self.forms(room)
        connection.receive(ClientHarness.message(room.identifier, #"{"n":1, "text":"h\u00e9"}"#))
        connection.receive(ClientHarness.message(room.identifier, #"{"n":2}"#))
        #expect(Self.drain(forms) == [#"text {"n":1, "text":"h\u00e9"}"#, #"text {"n":2}"#])
        #expect(await typed.next() == Line(n: 1, text: "hé"))
        #expect(await typed.next() == Line(n: 2, text: nil))
    }

    @Test("once an untyped consumer starts, messages are parsed into values on the I/O thread")
    func untypedParses() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(Self.params)
        let connection = try #require(h.connected())
        var typed = room.messages(as: Line.self).makeAsyncIterator()
        var untyped = room.messages.makeAsyncIterator()
        let forms = Self.forms(room)
        connection.receive(ClientHarness.message(room.identifier, #"{"n":3}"#))
        #expect(Self.drain(forms) == [#"value {"n":3}"#])
        #expect(await untyped.next() == ["n": 3])
        #expect(await typed.next() == Line(n: 3, text: nil), "a typed consumer decodes a value too")
    }

    @Test("an observer of the untyped messages counts as a consumer of values, as a loop does")
    func observerParses() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(Self.params)
        let connection = try #require(h.connected())
        let observation = room.messages.observe { _ in }
        defer { observation.cancel() }
        let forms = Self.forms(room)
        connection.receive(ClientHarness.message(room.identifier, #"{"n":4}"#))
        #expect(Self.drain(forms) == [#"value {"n":4}"#])
    }

    @Test("a message held as text reaches an untyped consumer that starts later, as its value")
    func heldTextReachesALateUntypedConsumer() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(Self.params)
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.message(room.identifier, #"{"n":5,"text":"x"}"#))  // held: nobody consumes
        var untyped = room.messages.makeAsyncIterator()
        #expect(await untyped.next() == ["n": 5, "text": "x"])
    }

    @Test("an app's own JSONDecoder decodes a message kept as text, from the text")
    func appDecoderReadsText() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(Self.params)
        let connection = try #require(h.connected())
        let decoder = JSONDecoder()
        var typed = room.messages(as: Line.self, decoder: decoder).makeAsyncIterator()
        let forms = Self.forms(room)
        connection.receive(ClientHarness.message(room.identifier, #"{"n":6,"text":"\ud83d\ude00"}"#))
        #expect(Self.drain(forms) == [#"text {"n":6,"text":"\ud83d\ude00"}"#])
        #expect(await typed.next() == Line(n: 6, text: "😀"))
    }

    @Test("a message written before its identifier is parsed (the decoder cannot know its route yet)")
    func messageBeforeIdentifier() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(Self.params)
        let connection = try #require(h.connected())
        var typed = room.messages(as: Line.self).makeAsyncIterator()
        let forms = Self.forms(room)
        let identifier = try JSONValue.string(room.identifier).jsonText()
        connection.receive(#"{"message":{"n":7},"identifier":\#(identifier)}"#)
        #expect(Self.drain(forms) == [#"value {"n":7}"#])
        #expect(await typed.next() == Line(n: 7, text: nil))
    }

    @Test("a malformed message is dropped as before, whatever form it would have taken")
    func malformedMessage() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(Self.params)
        let connection = try #require(h.connected())
        var typed = room.messages(as: Line.self).makeAsyncIterator()
        let forms = Self.forms(room)
        connection.receive(ClientHarness.message(room.identifier, #"{"n":8,}"#))
        connection.receive(ClientHarness.message(room.identifier, #"{"n":9}"#))
        #expect(Self.drain(forms) == [#"text {"n":9}"#])
        #expect(await typed.next() == Line(n: 9, text: nil))
    }

    @Test("a burst larger than the buffer, typed: the newest are kept as text, the rest counted as dropped")
    func burstAsText() async throws {
        var options = CableOptions()
        options.messageBufferSize = 8
        let h = try ClientHarness(options: options)
        let room = try h.client.subscribe(Self.params)
        let connection = try #require(h.connected())
        let typedView = room.messages(as: Line.self)
        connection.receive(read: (0..<20).map { ClientHarness.message(room.identifier, #"{"n":\#($0)}"#) })
        var typed = typedView.makeAsyncIterator()
        var got: [Int] = []
        for _ in 0..<8 { if let line = await typed.next() { got.append(line.n) } }
        #expect(got == Array(12..<20))
        #expect(typedView.droppedCount == 12)
        #expect(typedView.undecodableCount == 0)
    }
}
