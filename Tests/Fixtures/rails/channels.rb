# frozen_string_literal: true
#
# Channels of the fixture server. Every PUBLIC method of a channel is an action a client can
# perform, so helpers are private. Wire shapes are documented in Tests/Fixtures/README.md.

module FixtureLimits
  MAX_COUNT = 1_000_000
  MAX_SIZE = 16 * 1024 * 1024
  MAX_TOTAL_BYTES = 256 * 1024 * 1024
  MAX_SLEEP = 30.0

  module_function

  def count(v, default)
    n = v.nil? ? default : Integer(v) rescue default
    n.clamp(0, MAX_COUNT)
  end

  def size(v, default)
    n = v.nil? ? default : Integer(v) rescue default
    n.clamp(0, MAX_SIZE)
  end

  # Keeps count * size bounded so a typo cannot eat all memory.
  def bounded(count, size)
    return count if size <= 0
    [count, MAX_TOTAL_BYTES / size].min
  end
end

# EchoChannel — params: stream (default "echo"), reject (bool), slow (seconds, sleep in subscribed),
# greet (bool: transmit {"greeting":...} inside subscribed, i.e. before the confirmation).
class EchoChannel < ApplicationCable::Channel
  def subscribed
    if Fixture.truthy?(params[:reject])
      reject
      return
    end
    if (s = params[:slow])
      sleep(s.to_f.clamp(0.0, FixtureLimits::MAX_SLEEP))
    end
    transmit({ "greeting" => "hello #{current_user}", "stream" => stream_name }) if Fixture.truthy?(params[:greet])
    stream_from stream_name
  end

  # {"action":"echo", ...} → the same object back (including "action").
  def echo(data)
    transmit data
  end

  # A perform without "action" → Channel#receive → same object back.
  def receive(data)
    transmit data
  end

  # {"action":"broadcast", ...} → ActionCable.server.broadcast(stream, data): every subscriber of the stream
  # (on every server sharing the adapter) gets data, the sender too.
  def broadcast(data)
    ActionCable.server.broadcast(stream_name, data)
  end

  # → {"user":U,"via":"query|header|cookie|ticket|anonymous","stream":S,"server":NAME}
  def whoami(_data)
    transmit({ "user" => current_user, "via" => connection.auth_source, "tag" => connection.query_tag, "stream" => stream_name, "server" => Fixture::SERVER_NAME })
  end

  # {"action":"flood","count":N} → N transmits {"seq":i} then {"burst_done":N}.
  def flood(data)
    n = FixtureLimits.count(data["count"], 100)
    n.times { |i| transmit({ "seq" => i }) }
    transmit({ "burst_done" => n })
  end

  # {"action":"burst","count":N,"size":B} → N transmits {"seq":i,"pad":"x"*B} then {"burst_done":N}.
  def burst(data)
    size = FixtureLimits.size(data["size"], 0)
    n = FixtureLimits.bounded(FixtureLimits.count(data["count"], 100), size)
    pad = "x" * size
    n.times { |i| transmit({ "seq" => i, "pad" => pad }) }
    transmit({ "burst_done" => n })
  end

  # {"action":"kick","reason":R,"reconnect":bool} → {"type":"disconnect","reason":R,"reconnect":bool}, close 1000.
  # reason defaults to null, reconnect to true (as Connection#close).
  def kick(data)
    reconnect = data.key?("reconnect") ? Fixture.truthy?(data["reconnect"]) : true
    connection.close(reason: data["reason"], reconnect: reconnect)
  end

  # {"action":"record", ...} → nothing is sent back; the server appends
  # {"user","identifier","data","t"} to the log read by GET /control/recorded.
  def record(data)
    Fixture.record_perform({ "user" => current_user, "identifier" => identifier, "data" => data, "t" => Fixture.now_mono.round(6) })
  end

  # Raises inside the action: Rails logs it, sends nothing, the connection stays open.
  def boom(_data)
    raise "boom (fixture: exception inside an action)"
  end

  private

  def stream_name
    params[:stream].presence&.to_s || "echo"
  end
end

# ChatChannel — param room (required; missing → reject). Streams "chat:<room>".
class ChatChannel < ApplicationCable::Channel
  def subscribed
    room = params[:room].presence
    if room.nil?
      reject
      return
    end
    stream_from "chat:#{room}"
  end

  # {"action":"speak","text":T} → broadcast {"user":U,"room":R,"text":T} to "chat:<room>".
  def speak(data)
    ActionCable.server.broadcast("chat:#{params[:room]}", { "user" => current_user, "room" => params[:room].to_s, "text" => data["text"] })
  end
end

# RejectChannel — always rejects.
class RejectChannel < ApplicationCable::Channel
  def subscribed
    reject
  end
end

# BenchChannel — param sub (default "0"). Streams "bench:<sub>". Driven by POST /control/bench.
class BenchChannel < ApplicationCable::Channel
  def subscribed
    @sub = params.key?(:sub) ? params[:sub].to_s : "0"
    stream_from "bench:#{@sub}"
    Fixture.bench_add(@sub, self)
  end

  def unsubscribed
    Fixture.bench_remove(@sub, self) if @sub
  end
end
