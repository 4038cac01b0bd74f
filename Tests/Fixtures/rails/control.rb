# frozen_string_literal: true
#
# HTTP control surface of the fixture server (same port as /cable). Everything answers JSON
# except POST /control/ticket (text/plain ticket). See Tests/Fixtures/README.md.

module FixtureControl
  module_function

  def json(status, obj)
    [status, { "Content-Type" => "application/json" }, [JSON.generate(obj) + "\n"]]
  end

  def text(status, s)
    [status, { "Content-Type" => "text/plain" }, [s]]
  end

  def bad(msg)
    json(400, { "ok" => false, "error" => msg })
  end

  # Body as JSON if it parses (any JSON value), else the raw string; empty body → {}.
  def body_value(req)
    raw = req.body&.read.to_s
    return {} if raw.strip.empty?
    JSON.parse(raw, quirks_mode: true)
  rescue JSON::ParserError
    raw
  end

  def alive_connections
    Fixture.connections_snapshot.select { |c, _| c.alive_for_fixture? }
  end

  def connections_info
    live = alive_connections
    by_user = Hash.new(0)
    live.each_value { |v| by_user[v[:user]] += 1 }
    c = Fixture.counters
    {
      "count" => live.size,
      "users" => by_user,
      "sockets" => Fixture.sockets_count,
      "rails_connections" => ActionCable.server.connections.size,
      "total_connected" => c[:connected],
      "total_disconnected" => c[:disconnected],
      "total_sockets_opened" => c[:sockets_opened],
      "handshakes" => c[:handshakes],
      "server" => Fixture::SERVER_NAME,
    }
  end

  def call(env)
    req = Rack::Request.new(env)
    m = req.request_method
    q = req.GET
    case [m, req.path_info]
    when ["GET", "/control/health"], ["GET", "/health"]
      json(200, { "ok" => true, "pid" => Process.pid, "adapter" => Fixture::ADAPTER, "server" => Fixture::SERVER_NAME,
                  "actioncable" => ActionCable.version.to_s, "ruby" => RUBY_VERSION,
                  "allow_anonymous" => Fixture.allow_anonymous?, "pings_enabled" => Fixture.pings_enabled?,
                  "beat_interval" => ActionCable::Server::Connections::BEAT_INTERVAL,
                  "uptime" => (Fixture.now_mono - Fixture::STARTED_MONO).round(3) })

    when ["GET", "/control/connections"]
      info = connections_info
      if Fixture.truthy?(q["detail"])
        info["connections"] = alive_connections.map do |c, v|
          { "user" => v[:user], "via" => v[:via], "opened_at" => v[:opened_at], "subscriptions" => c.subscriptions.identifiers }
        end
      end
      json(200, info)

    when ["GET", "/control/recorded"]
      json(200, { "recorded" => Fixture.recorded })

    when ["DELETE", "/control/recorded"], ["POST", "/control/recorded/clear"]
      Fixture.clear_recorded
      json(200, { "ok" => true })

    when ["POST", "/control/broadcast"]
      stream = q["stream"].presence or return bad("stream required")
      value = body_value(req)
      ActionCable.server.broadcast(stream, value)
      json(200, { "ok" => true, "stream" => stream })

    when ["POST", "/control/broadcast_many"]
      stream = q["stream"].presence or return bad("stream required")
      size = FixtureLimits.size(q["size"], 0)
      n = FixtureLimits.bounded(FixtureLimits.count(q["count"], 100), size)
      pad = "x" * size
      t0 = Fixture.now_mono
      n.times { |i| ActionCable.server.broadcast(stream, { "seq" => i, "pad" => pad }) }
      ActionCable.server.broadcast(stream, { "burst_done" => n })
      json(200, { "ok" => true, "stream" => stream, "count" => n, "elapsed_ms" => ((Fixture.now_mono - t0) * 1000).round(1) })

    when ["POST", "/control/bench"]
      bench(q)

    when ["POST", "/control/disconnect"]
      # Rails 6.1 RemoteConnection#disconnect: internal-channel "disconnect" → the socket is closed with
      # close 1000 and NO disconnect frame. Works across servers on the redis adapter. 6.1 has no
      # reconnect argument; the reconnect query parameter is accepted and ignored (echoed back).
      user = q["user"].presence or return bad("user required")
      ActionCable.server.remote_connections.where(current_user: user).disconnect
      json(200, { "ok" => true, "user" => user, "frame" => false, "reconnect_ignored" => q["reconnect"] })

    when ["POST", "/control/close"]
      close_conns(q)

    when ["POST", "/control/restart"]
      n = alive_connections.size
      ActionCable.server.restart
      json(200, { "ok" => true, "closed" => n })

    when ["POST", "/control/ticket"]
      user = q["user"].presence || "ticket"
      return bad("bad user") unless ApplicationCable::Connection::TOKEN_RE.match?("tok-#{user}")
      text(200, Fixture.issue_ticket(user))

    when ["POST", "/control/anonymous"]
      Fixture.allow_anonymous = Fixture.truthy?(q["allow"])
      json(200, { "ok" => true, "allow_anonymous" => Fixture.allow_anonymous? })

    when ["POST", "/control/pings"]
      Fixture.pings_enabled = Fixture.truthy?(q["enabled"])
      json(200, { "ok" => true, "pings_enabled" => Fixture.pings_enabled? })

    when ["POST", "/control/expire_token"]
      if Fixture.truthy?(q["clear"])
        Fixture.clear_expired_tokens
      else
        tok = q["token"].presence or return bad("token required")
        Fixture.expire_token(tok)
      end
      json(200, { "ok" => true })

    when ["GET", "/control/handshakes"]
      json(200, { "handshakes" => Fixture.handshakes })

    when ["DELETE", "/control/handshakes"], ["POST", "/control/handshakes/clear"]
      Fixture.clear_handshakes
      json(200, { "ok" => true })

    else
      json(404, { "ok" => false, "error" => "no such control endpoint: #{m} #{req.path_info}" })
    end
  rescue => e
    json(500, { "ok" => false, "error" => "#{e.class}: #{e.message}" })
  end

  # POST /control/close?user=U&reason=R&reconnect=false   (or all=1 instead of user)
  # user: via a custom internal-channel message, so every server on the adapter closes U's connections
  # with {"type":"disconnect","reason":R,"reconnect":bool} + close 1000.
  # all=1: every live connection on THIS server.
  def close_conns(q)
    reason = q["reason"].presence
    reconnect = q.key?("reconnect") ? Fixture.truthy?(q["reconnect"]) : true
    if Fixture.truthy?(q["all"])
      conns = alive_connections.keys
      conns.each { |c| c.close(reason: reason, reconnect: reconnect) }
      return json(200, { "ok" => true, "closed" => conns.size, "reason" => reason, "reconnect" => reconnect })
    end
    user = q["user"].presence or return bad("user or all=1 required")
    local = alive_connections.count { |_, v| v[:user] == user }
    ActionCable.server.broadcast("action_cable/#{user}", { type: "fixture_close", reason: reason, reconnect: reconnect })
    json(200, { "ok" => true, "user" => user, "local_matches" => local, "reason" => reason, "reconnect" => reconnect })
  end

  # POST /control/bench?count=N&subs=S[&size=B][&via=broadcast|transmit][&async=1]
  # Message i (0 <= i < N) goes to sub (i mod S) as {"seq":i,"sub":"<s>","pad":"x"*B}; then EVERY sub
  # 0..S-1 gets one final {"end":true,"sub":"<s>","sent":K} where K = messages sent to that sub.
  def bench(q)
    subs = (Integer(q["subs"]) rescue 1).clamp(1, 10_000)
    size = FixtureLimits.size(q["size"], 0)
    n = FixtureLimits.bounded(FixtureLimits.count(q["count"], 1000), size)
    via = q["via"].presence || "broadcast"
    return bad("via must be broadcast or transmit") unless %w[broadcast transmit].include?(via)
    per_sub = Array.new(subs) { |s| n / subs + (s < n % subs ? 1 : 0) }
    run = lambda do
      pad = "x" * size
      t0 = Fixture.now_mono
      if via == "broadcast"
        n.times do |i|
          s = i % subs
          msg = { "seq" => i, "sub" => s.to_s }
          msg["pad"] = pad if size > 0
          ActionCable.server.broadcast("bench:#{s}", msg)
        end
        subs.times { |s| ActionCable.server.broadcast("bench:#{s}", { "end" => true, "sub" => s.to_s, "sent" => per_sub[s] }) }
      else
        targets = Array.new(subs) { |s| Fixture.bench_subs(s).select { |ch| ch.connection.alive_for_fixture? } }
        n.times do |i|
          s = i % subs
          msg = { "seq" => i, "sub" => s.to_s }
          msg["pad"] = pad if size > 0
          targets[s].each { |ch| ch.connection.transmit(identifier: ch.identifier, message: msg) }
        end
        subs.times do |s|
          targets[s].each { |ch| ch.connection.transmit(identifier: ch.identifier, message: { "end" => true, "sub" => s.to_s, "sent" => per_sub[s] }) }
        end
      end
      ((Fixture.now_mono - t0) * 1000).round(1)
    end
    if Fixture.truthy?(q["async"])
      Thread.new { run.call rescue nil }
      json(202, { "ok" => true, "count" => n, "subs" => subs, "per_sub" => per_sub, "via" => via, "async" => true })
    else
      ms = run.call
      json(200, { "ok" => true, "count" => n, "subs" => subs, "per_sub" => per_sub, "via" => via, "elapsed_ms" => ms })
    end
  end
end

# Wraps ActionCable.server: records every request to /cable (handshake log) and implements
# ?delay_upgrade=SECONDS (sleep before the 101, holding a puma thread; max 30 s).
class FixtureCableEndpoint
  def call(env)
    q = Rack::Utils.parse_query(env["QUERY_STRING"].to_s)
    Fixture.record_handshake({
      "t" => Fixture.now_mono.round(6),
      "path" => env["PATH_INFO"], "query" => env["QUERY_STRING"].to_s,
      "origin" => env["HTTP_ORIGIN"], "authorization" => env["HTTP_AUTHORIZATION"], "cookie" => env["HTTP_COOKIE"],
      "protocol" => env["HTTP_SEC_WEBSOCKET_PROTOCOL"], "user_agent" => env["HTTP_USER_AGENT"],
      "upgrade" => env["HTTP_UPGRADE"],
    })
    if (d = q["delay_upgrade"].presence)
      sleep(d.to_f.clamp(0.0, 30.0))
    end
    # ?redirect=URL → 302 Location: URL instead of the upgrade (for redirect / credential-leak tests).
    if (loc = q["redirect"].presence)
      return [302, { "Location" => loc, "Content-Type" => "text/plain", "Content-Length" => "0" }, []]
    end
    # ?http_status=NNN (400..599) → that status with body "fixture status NNN" instead of the upgrade.
    if (st = q["http_status"].presence) && (code = st.to_i).between?(400, 599)
      body = "fixture status #{code}"
      return [code, { "Content-Type" => "text/plain", "Content-Length" => body.bytesize.to_s }, [body]]
    end
    ActionCable.server.call(env)
  end
end

FixtureApp = Rack::Builder.new do
  map("/cable") { run FixtureCableEndpoint.new }
  run ->(env) { FixtureControl.call(env) }
end.to_app
