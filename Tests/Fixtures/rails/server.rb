# frozen_string_literal: true
#
# Standalone Action Cable 6.1 fixture server for the CableReactive integration tests.
# No Rails app, no Gemfile, no bundler: Debian's ruby-actioncable / puma / ruby-redis only.
# Run it with Scripts/rails-server (or: puma --no-config -t 0:16 -e production -b tcp://127.0.0.1:PORT config.ru).
# See Tests/Fixtures/README.md for every endpoint, channel and environment variable.

# CI may run without a UTF-8 locale; Ruby would then treat external data as US-ASCII.
Encoding.default_external = Encoding::UTF_8
require "json"
require "securerandom"
require "logger"
require "rack"
require "time"
require "active_support"
require "active_support/core_ext"
# Load order matters: action_dispatch and its Request before anything that touches cookies
# (see README "Surprises"). We read cookies with Rack::Utils ourselves and never use the cookie jar.
require "action_dispatch"
require "action_dispatch/http/request"
require "action_cable"

module Fixture
  module_function

  def env_flag(name, default = false)
    v = ENV[name]
    return default if v.nil? || v.empty?
    %w[1 true yes on].include?(v.downcase)
  end

  def truthy?(v)
    v == true || %w[1 true yes on].include?(v.to_s.downcase)
  end

  def now_mono
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # --- mutable fixture state, all behind one lock ---------------------------------------------------
  LOCK = Mutex.new
  @allow_anonymous = env_flag("CABLE_ALLOW_ANONYMOUS")
  @pings_enabled = true
  @tickets = {}            # ticket => user (one-time)
  @expired_tokens = {}     # token => true: these tokens now get token_expired
  @handshakes = []         # last HANDSHAKE_LOG_MAX upgrade requests
  @connections = {}        # connection => { user:, via:, opened_at: }  (authorized, welcome sent or about to be)
  @sockets = {}            # connection => true, from on_open to on_close (includes rejected/not-yet-authorized)
  @counters = Hash.new(0)
  @bench = Hash.new { |h, k| h[k] = [] } # sub (String) => [BenchChannel instances on this server]
  HANDSHAKE_LOG_MAX = 500
  RECORD_MAX = 100_000

  class << self
    def allow_anonymous?; LOCK.synchronize { @allow_anonymous }; end
    def allow_anonymous=(v); LOCK.synchronize { @allow_anonymous = v }; end

    def pings_enabled?; LOCK.synchronize { @pings_enabled }; end
    def pings_enabled=(v); LOCK.synchronize { @pings_enabled = v }; end

    def issue_ticket(user)
      t = "tkt-#{SecureRandom.hex(12)}"
      LOCK.synchronize { @tickets[t] = user }
      t
    end

    # Returns the user the ticket was issued for, exactly once; nil for unknown or replayed tickets.
    def redeem_ticket(t)
      LOCK.synchronize { @tickets.delete(t) }
    end

    def expire_token(tok); LOCK.synchronize { @expired_tokens[tok] = true }; end
    def clear_expired_tokens; LOCK.synchronize { @expired_tokens.clear }; end
    def token_expired?(tok); LOCK.synchronize { @expired_tokens.key?(tok) }; end

    def record_handshake(h)
      LOCK.synchronize do
        @counters[:handshakes] += 1
        @handshakes << h.merge(seq: @counters[:handshakes])
        @handshakes.shift while @handshakes.size > HANDSHAKE_LOG_MAX
      end
    end

    def handshakes; LOCK.synchronize { @handshakes.dup }; end
    def clear_handshakes; LOCK.synchronize { @handshakes.clear }; end

    def socket_opened(conn)
      LOCK.synchronize { @sockets[conn] = true; @counters[:sockets_opened] += 1 }
    end

    # Returns false if the socket already closed (client went away while connect ran).
    def connected(conn, user, via)
      LOCK.synchronize do
        return false unless @sockets.key?(conn)
        @connections[conn] = { user: user, via: via, opened_at: Time.now.utc.iso8601(3) }
        @counters[:connected] += 1
        true
      end
    end

    def socket_closed(conn)
      LOCK.synchronize do
        @counters[:sockets_closed] += 1 if @sockets.delete(conn)
        @counters[:disconnected] += 1 if @connections.delete(conn)
      end
    end

    def socket_open?(conn); LOCK.synchronize { @sockets.key?(conn) }; end
    def connections_snapshot; LOCK.synchronize { @connections.dup }; end
    def sockets_count; LOCK.synchronize { @sockets.size }; end
    def counters; LOCK.synchronize { @counters.dup }; end
    def count(key); LOCK.synchronize { @counters[key] += 1 }; end

    # Performs of EchoChannel#record, in arrival order (bounded).
    def record_perform(entry)
      LOCK.synchronize do
        @counters[:recorded] += 1
        @recorded ||= []
        @recorded << entry.merge("n" => @counters[:recorded])
        @recorded.shift while @recorded.size > RECORD_MAX
      end
    end
    def recorded; LOCK.synchronize { (@recorded || []).dup }; end
    def clear_recorded; LOCK.synchronize { @recorded = [] }; end

    def bench_add(sub, ch); LOCK.synchronize { @bench[sub.to_s] << ch }; end
    def bench_remove(sub, ch); LOCK.synchronize { @bench[sub.to_s].delete(ch); @bench.delete(sub.to_s) if @bench[sub.to_s].empty? }; end
    def bench_subs(sub); LOCK.synchronize { @bench.key?(sub.to_s) ? @bench[sub.to_s].dup : [] }; end
  end
end

# ------------------------------------------------------------------------------------------------------
# Action Cable configuration
# ------------------------------------------------------------------------------------------------------
log_level = (ENV["CABLE_LOG_LEVEL"].presence || "info").upcase
base_logger = Logger.new($stdout)
base_logger.level = Logger.const_get(log_level)
$stdout.sync = true

ActionCable.server.config.logger = ActiveSupport::TaggedLogging.new(base_logger)
ActionCable.server.config.connection_class = -> { ApplicationCable::Connection }
ActionCable.server.config.worker_pool_size = Integer(ENV["CABLE_WORKER_POOL_SIZE"].presence || 4)
ActionCable.server.config.mount_path = nil
# Origin policy: no Origin header at all (native clients) or http(s)://localhost|127.0.0.1[:port].
# allow_same_origin_as_host is off so that an arbitrary Origin equal to the Host header is NOT let in.
ActionCable.server.config.allow_same_origin_as_host = false
ActionCable.server.config.allowed_request_origins = [nil, %r{\Ahttps?://(localhost|127\.0\.0\.1)(:\d+)?\z}]
ActionCable.server.config.disable_request_forgery_protection = Fixture.env_flag("CABLE_DISABLE_FORGERY_PROTECTION")

# CABLE_BEAT_INTERVAL: seconds between server pings (Rails: 3). The heartbeat timer is created on the
# first request and reads the constant then, so replacing it here is enough.
if (beat = ENV["CABLE_BEAT_INTERVAL"].presence)
  ActionCable::Server::Connections.send(:remove_const, :BEAT_INTERVAL)
  ActionCable::Server::Connections.const_set(:BEAT_INTERVAL, Float(beat).clamp(0.05, 3600.0))
end

adapter = ENV["CABLE_ADAPTER"].presence || "async"
cable_cfg = { "adapter" => adapter }
if adapter == "redis"
  cable_cfg["url"] = ENV["REDIS_URL"].presence || "redis://127.0.0.1:6379/0"
  cable_cfg["channel_prefix"] = ENV["CABLE_CHANNEL_PREFIX"].presence || "cable_fixture"
end
ActionCable.server.config.cable = cable_cfg.with_indifferent_access

module Fixture
  ADAPTER = ActionCable.server.config.cable["adapter"]
  SERVER_NAME = ENV["CABLE_SERVER_NAME"].presence || "fixture-#{Process.pid}"
  STARTED_MONO = now_mono
end

# ------------------------------------------------------------------------------------------------------
# Connection: authentication
# ------------------------------------------------------------------------------------------------------
module ApplicationCable
  class TokenExpiredError < StandardError; end
  class ExplodeError < StandardError; end

  class Connection < ActionCable::Connection::Base
    identified_by :current_user
    attr_reader :auth_source, :query_tag

    # The user name may hold base64's + / = so that clients can show their query encoding survives Rack
    # (which decodes a raw + as a space).
    TOKEN_RE = /\Atok-([A-Za-z0-9_.@+\/=-]{1,64})\z/

    def connect
      q = request.GET
      @no_pings = Fixture.truthy?(q["no_pings"])
      if (d = q["delay_welcome"].presence)
        sleep(d.to_f.clamp(0.0, 30.0))
      end

      user, via = authenticate(q)
      self.current_user = user
      @auth_source = via
      @query_tag = q["tag"]  # echoed by whoami: an item the app's URL had before onRequest added its own
      # The client may already have gone away while we slept; then it must not be counted.
      Fixture.connected(self, user, via)
    end

    # Socket-level tracking for an accurate live count (Rails' own server.connections keeps closed
    # connections after ActionCable.server.restart, because their close callbacks were queued on the
    # halted worker pool). on_open/on_close run synchronously on the event loop.
    def on_open
      Fixture.socket_opened(self)
      super
    end

    def on_close(reason, code)
      Fixture.socket_closed(self)
      server.remove_connection(self)
      super
    end

    # Server pings can be switched off globally (POST /control/pings?enabled=0) or per connection
    # (?no_pings=1): the socket stays healthy otherwise, so clients can test stale detection.
    def beat
      return if @no_pings || !Fixture.pings_enabled?
      super
    end

    # Alive = authorized, welcome sent, WebSocket still OPEN (not closing).
    def alive_for_fixture?
      websocket.alive?
    end

    private

    # Rails 6.1 handle_open only rescues UnauthorizedError. token_expired is our own variant:
    # same wire shape as unauthorized (disconnect frame, then close 1000), different reason.
    def handle_open
      super
      # The client may have closed while connect ran (e.g. delay_welcome): on_close already happened,
      # and Rails' add_connection above would leave a dead entry in server.connections.
      server.remove_connection(self) unless Fixture.socket_open?(self)
    rescue TokenExpiredError
      Fixture.count(:token_expired)
      close(reason: "token_expired", reconnect: false) if websocket.alive?
    end

    def authenticate(q)
      if (ticket = q["ticket"].presence)
        user = Fixture.redeem_ticket(ticket)
        Fixture.count(:tickets_rejected) unless user
        reject_unauthorized_connection unless user
        return [user, "ticket"]
      end

      token, via = extract_token(q)
      if token.nil?
        return ["anon-#{SecureRandom.hex(4)}", "anonymous"] if Fixture.allow_anonymous?
        reject_unauthorized_connection
      end
      raise TokenExpiredError if token == "expired" || Fixture.token_expired?(token)
      raise ExplodeError, "token explode: simulated crash in connect" if token == "explode"
      m = TOKEN_RE.match(token)
      reject_unauthorized_connection unless m
      [m[1], via]
    end

    # Precedence: ?token= query, then Authorization: Bearer, then cookie token=.
    def extract_token(q)
      if (t = q["token"].presence)
        return [t, "query"]
      end
      auth = env["HTTP_AUTHORIZATION"].to_s
      if (m = /\ABearer\s+(.+)\z/i.match(auth.strip))
        return [m[1], "header"]
      end
      cookies = Rack::Utils.parse_cookies(env)
      if (t = cookies["token"].presence)
        return [t, "cookie"]
      end
      [nil, nil]
    end

    # Custom internal-channel message so /control/close works across servers (redis adapter):
    # Rails 6.1's own remote "disconnect" only closes the socket without a disconnect frame.
    def process_internal_message(message)
      if message["type"] == "fixture_close"
        close(reason: message["reason"], reconnect: message["reconnect"] != false)
      else
        super
      end
    end
  end

  class Channel < ActionCable::Channel::Base
  end
end

require_relative "channels"
require_relative "control"

# ------------------------------------------------------------------------------------------------------
# Watchdog: a leaked server must not outlive its test run.
#   CABLE_MAX_LIFETIME seconds (default 1800, 0 = forever), CABLE_WATCH_PID (exit when it is gone).
# ------------------------------------------------------------------------------------------------------
module Fixture
  MAX_LIFETIME = Float(ENV["CABLE_MAX_LIFETIME"].presence || 1800)
  WATCH_PID = ENV["CABLE_WATCH_PID"].presence&.to_i

  def self.start_watchdog
    Thread.new do
      Thread.current.name = "fixture-watchdog"
      loop do
        sleep 0.5
        reason = nil
        reason = "max lifetime #{MAX_LIFETIME}s reached" if MAX_LIFETIME > 0 && now_mono - STARTED_MONO > MAX_LIFETIME
        if WATCH_PID && WATCH_PID > 0
          begin
            Process.kill(0, WATCH_PID)
          rescue Errno::ESRCH
            reason = "watched pid #{WATCH_PID} is gone"
          rescue Errno::EPERM
            nil
          end
        end
        next unless reason
        $stdout.puts "fixture watchdog: #{reason}, stopping"
        Process.kill("TERM", Process.pid)
        sleep 5
        Process.exit!(1)
      end
    end
  end
end
Fixture.start_watchdog
