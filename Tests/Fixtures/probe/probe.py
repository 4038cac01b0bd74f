#!/usr/bin/env python3
"""End-to-end probe of the test fixtures: the Rails Action Cable server, the redis pair and the
fault proxy. It starts every process itself (Scripts/rails-server, faultproxy.py), checks the wire
behaviour the Swift integration tests will rely on, stops everything, and prints
`N passed, M failed` last. Exit status 0 only if nothing failed.

    .venv/bin/python Tests/Fixtures/probe/probe.py [--pid-file FILE] [--only NAME,...] [--verbose]

Needs: Scripts/install-rails-deps (as root) and the `websockets` package (17.4, repo .venv).
"""

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
RAILS_SERVER = os.path.join(ROOT, "Scripts", "rails-server")
FAULTPROXY = os.path.join(ROOT, "Tests", "Fixtures", "faultproxy", "faultproxy.py")

PASSED = 0
FAILED = 0
FAILURES = []
VERBOSE = False
PID_FILE = None
LOG_DIR = None  # every server's log goes here; removed after a clean run, shown after a failure
CLEANUP = []  # (kind, pid or Popen)


def log(*a):
    print(*a, flush=True)


def check(name, cond, detail=""):
    global PASSED, FAILED
    if cond:
        PASSED += 1
        log(f"  ok   {name}" + (f"  ({detail})" if detail and VERBOSE else ""))
    else:
        FAILED += 1
        FAILURES.append(name)
        log(f"  FAIL {name}" + (f"  -- {detail}" if detail else ""))
    return cond


def info(msg):
    log(f"  info {msg}")


# ---- processes -------------------------------------------------------------------------------------
def record_pid(kind, pid):
    if PID_FILE:
        with open(PID_FILE, "a") as f:
            f.write(f"{kind} {pid}\n")


def rails_start(*extra):
    out = subprocess.run(
        [RAILS_SERVER, "start", "--watch-pid", str(os.getpid()), "--max-lifetime", "600", "--log-dir", LOG_DIR, *extra],
        capture_output=True, text=True, timeout=40,
    )
    if out.returncode != 0:
        raise RuntimeError(f"rails-server start failed: {out.stderr}")
    port, pid = out.stdout.split()[:2]
    CLEANUP.append(("rails", int(pid)))
    record_pid("rails", pid)
    return int(port), int(pid)


def redis_start():
    out = subprocess.run([RAILS_SERVER, "start-redis", "--log-dir", LOG_DIR], capture_output=True, text=True, timeout=20)
    if out.returncode != 0:
        raise RuntimeError(f"start-redis failed: {out.stderr}")
    port, pid = out.stdout.split()[:2]
    CLEANUP.append(("redis", int(pid)))
    record_pid("redis", pid)
    return int(port), int(pid)


def stop_pid(pid):
    subprocess.run([RAILS_SERVER, "stop", str(pid)], capture_output=True, timeout=20)


class FaultProxy:
    def __init__(self, target_port, extra=()):
        self.proc = subprocess.Popen(
            [sys.executable, FAULTPROXY, "--target", f"127.0.0.1:{target_port}", "--max-lifetime", "300", *extra],
            stdout=subprocess.PIPE, stderr=sys.stderr, text=True,
        )
        CLEANUP.append(("proxy", self.proc))
        record_pid("proxy", self.proc.pid)
        line = self.proc.stdout.readline()
        cfg = json.loads(line)
        self.port, self.control = cfg["listen"], cfg["control"]

    async def post(self, path):
        return await http("POST", self.control, path)

    async def stats(self):
        return (await http("GET", self.control, "/stats"))[1]


def cleanup():
    for kind, what in reversed(CLEANUP):
        try:
            if kind == "proxy":
                if what.poll() is None:
                    what.terminate()
                    try:
                        what.wait(3)
                    except subprocess.TimeoutExpired:
                        what.kill()
                        what.wait(3)
            elif kind == "rails":
                stop_pid(what)
        except Exception as e:  # noqa: BLE001
            log(f"cleanup of {kind} {what}: {e}")
    # redis last: a puma with a live redis listener dies when redis goes away first
    for kind, what in CLEANUP:
        if kind == "redis":
            try:
                subprocess.run([RAILS_SERVER, "stop-redis", str(what)], capture_output=True, timeout=20)
            except Exception as e:  # noqa: BLE001
                log(f"cleanup of redis {what}: {e}")
    CLEANUP.clear()


# ---- HTTP -----------------------------------------------------------------------------------------------
def _http(method, port, path, body=None, timeout=30):
    data = None
    headers = {}
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method, headers=headers)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never an env proxy
    try:
        with opener.open(req, timeout=timeout) as r:
            raw = r.read().decode()
            status = r.status
    except urllib.error.HTTPError as e:
        raw = e.read().decode()
        status = e.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


async def http(method, port, path, body=None, timeout=30):
    return await asyncio.to_thread(_http, method, port, path, body, timeout)


# ---- Action Cable client helper ------------------------------------------------------------------------
def ident(channel, **params):
    return json.dumps({"channel": channel, **params}, separators=(",", ":"))


class Cable:
    def __init__(self, ws):
        self.ws = ws
        self.pings = 0

    @classmethod
    async def open(cls, port, query="", headers=None, origin=None, welcome=True, open_timeout=5, token="tok-probe"):
        q = query
        if token and "token=" not in q and "ticket=" not in q:
            q = f"token={token}" + (f"&{q}" if q else "")
        uri = f"ws://127.0.0.1:{port}/cable" + (f"?{q}" if q else "")
        ws = await connect(
            uri, origin=origin, additional_headers=headers or {}, subprotocols=["actioncable-v1-json"],
            open_timeout=open_timeout, ping_interval=None, max_size=None, compression=None, proxy=None,
            close_timeout=2,
        )
        c = cls(ws)
        if welcome:
            m = await c.recv()
            if m.get("type") != "welcome":
                await ws.close()
                raise AssertionError(f"expected welcome, got {m}")
        return c

    async def recv(self, timeout=5.0, pings=False):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise asyncio.TimeoutError()
            raw = await asyncio.wait_for(self.ws.recv(), left)
            m = json.loads(raw)
            if m.get("type") == "ping" and not pings:
                self.pings += 1
                continue
            return m

    async def send(self, obj):
        await self.ws.send(json.dumps(obj))

    async def subscribe(self, identifier, timeout=5.0):
        """Returns (type, frames_before) where type is confirm_subscription / reject_subscription."""
        await self.send({"command": "subscribe", "identifier": identifier})
        before = []
        while True:
            m = await self.recv(timeout)
            if m.get("identifier") == identifier and m.get("type") in ("confirm_subscription", "reject_subscription"):
                return m["type"], before
            before.append(m)

    async def perform(self, identifier, action, **data):
        payload = dict(data)
        if action is not None:
            payload["action"] = action
        await self.send({"command": "message", "identifier": identifier, "data": json.dumps(payload)})

    async def message(self, identifier, timeout=5.0):
        while True:
            m = await self.recv(timeout)
            if m.get("identifier") == identifier and "message" in m:
                return m["message"]

    async def until_closed(self, timeout=5.0):
        """Collects frames until the socket closes. Returns (frames, close_code, close_frame_received)."""
        frames = []
        deadline = time.monotonic() + timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return frames, None, None
                raw = await asyncio.wait_for(self.ws.recv(), left)
                m = json.loads(raw)
                if m.get("type") != "ping":
                    frames.append(m)
        except ConnectionClosed as e:
            rcvd = e.rcvd
            return frames, (rcvd.code if rcvd else 1006), rcvd is not None
        except asyncio.TimeoutError:
            return frames, None, None

    async def close(self):
        try:
            await self.ws.close()
        except Exception:  # noqa: BLE001
            pass


async def expect_closed_with(port, query, reason, token=None, headers=None):
    c = await Cable.open(port, query, welcome=False, token=token, headers=headers)
    frames, code, rcvd = await c.until_closed(5)
    return frames == [{"type": "disconnect", "reason": reason, "reconnect": False}] and code == 1000, f"{frames} code={code}"


async def frames_until_quiet(c, gap):
    """Every frame `c` receives, pings included, until `gap` seconds pass without one (or "closed ..." if the
    connection closes)."""
    got = []
    try:
        while True:
            got.append(await c.recv(gap, pings=True))
    except asyncio.TimeoutError:
        pass
    except ConnectionClosed as e:
        got.append(f"closed {e}")
    return got


async def wait_count(port, want, timeout=3.0):
    deadline = time.monotonic() + timeout
    while True:
        _, st = await http("GET", port, "/control/connections")
        if st["count"] == want or time.monotonic() > deadline:
            return st
        await asyncio.sleep(0.05)


# ---- probes ---------------------------------------------------------------------------------------------
async def t_basics(A):
    st, h = await http("GET", A, "/control/health")
    check("health answers JSON ok", st == 200 and h.get("ok") is True and h.get("actioncable") == "6.1.7.10", h)
    c = await Cable.open(A, token="tok-alice")
    check("welcome is the first frame", True)
    i = ident("EchoChannel")
    typ, before = await c.subscribe(i)
    check("subscribe EchoChannel -> confirm_subscription", typ == "confirm_subscription" and before == [], f"{typ} {before}")
    await c.perform(i, "echo", text="hi", n=1)
    m = await c.message(i)
    check("echo returns data incl. action", m == {"text": "hi", "n": 1, "action": "echo"}, m)
    await c.perform(i, "echo", text="h\u00e9llo \u2713 \U0001F680")
    m = await c.message(i)
    check("echo keeps UTF-8 text intact", m.get("text") == "h\u00e9llo \u2713 \U0001F680", m)
    await c.perform(i, None, text="plain")
    m = await c.message(i)
    check("perform without action -> receive echoes", m == {"text": "plain"}, m)
    # identifier echoed byte for byte (spacing preserved)
    spaced = json.dumps({"channel": "EchoChannel", "stream": "sp"})
    typ, _ = await c.subscribe(spaced)
    check("identifier echoed verbatim (spaced JSON)", typ == "confirm_subscription")
    await c.perform(spaced, "whoami")
    m = await c.message(spaced)
    check("whoami via query", m.get("user") == "alice" and m.get("via") == "query" and m.get("stream") == "sp", m)
    await c.perform(i, "broadcast", via="pubsub")
    m = await c.message(i)
    check("broadcast action reaches the sender's stream", m == {"action": "broadcast", "via": "pubsub"}, m)
    st, r = await http("POST", A, "/control/broadcast?stream=echo", {"from": "http"})
    m = await c.message(i)
    check("POST /control/broadcast JSON body", st == 200 and m == {"from": "http"}, m)
    st, r = await http("POST", A, "/control/broadcast?stream=echo", b"plain string")
    m = await c.message(i)
    check("POST /control/broadcast non-JSON body -> string", m == "plain string", m)
    g = ident("EchoChannel", greet=True, stream="g")
    typ, before = await c.subscribe(g)
    check("greet: transmit inside subscribed arrives before confirm",
          typ == "confirm_subscription" and len(before) == 1 and before[0]["message"].get("greeting") == "hello alice",
          before)
    t0 = time.monotonic()
    typ, _ = await c.subscribe(ident("EchoChannel", slow=1.0, stream="slow"))
    dt = time.monotonic() - t0
    check("slow subscribe confirms after ~1 s", typ == "confirm_subscription" and 0.9 <= dt < 3.0, f"{dt:.2f}s")
    await c.perform(i, "boom")
    await c.perform(i, "echo", after="boom")
    m = await c.message(i)
    check("action that raises leaves the connection usable", m == {"after": "boom", "action": "echo"}, m)
    await c.close()


async def t_reject(A):
    c = await Cable.open(A)
    for name, idf in [
        ("EchoChannel reject:true", ident("EchoChannel", reject=True)),
        ("RejectChannel", ident("RejectChannel")),
        ("ChatChannel without room", ident("ChatChannel")),
    ]:
        typ, _ = await c.subscribe(idf)
        check(f"{name} -> reject_subscription", typ == "reject_subscription", typ)
    await c.close()


async def t_chat(A):
    a = await Cable.open(A, token="tok-ann")
    b = await Cable.open(A, token="tok-ben")
    lobby = ident("ChatChannel", room="lobby")
    other = ident("ChatChannel", room="other")
    await a.subscribe(lobby)
    await b.subscribe(lobby)
    await b.subscribe(other)
    await a.perform(lobby, "speak", text="hello lobby")
    ma = await a.message(lobby)
    mb = await b.message(lobby)
    want = {"user": "ann", "room": "lobby", "text": "hello lobby"}
    check("chat speak reaches both members (sender too)", ma == want and mb == want, f"{ma} {mb}")
    await a.close()
    await b.close()


async def t_auth(A):
    # query / header / cookie side by side, on three simultaneous connections
    conns = [
        ("query", await Cable.open(A, token="tok-qq")),
        ("header", await Cable.open(A, token=None, headers={"Authorization": "Bearer tok-hh"})),
        ("cookie", await Cable.open(A, token=None, headers={"Cookie": "other=1; token=tok-cc"})),
    ]
    i = ident("EchoChannel")
    got = {}
    for via, c in conns:
        await c.subscribe(i)
        await c.perform(i, "whoami")
        got[via] = await c.message(i)
    check("auth side by side: query/header/cookie",
          got["query"]["user"] == "qq" and got["query"]["via"] == "query"
          and got["header"]["user"] == "hh" and got["header"]["via"] == "header"
          and got["cookie"]["user"] == "cc" and got["cookie"]["via"] == "cookie", got)
    for _, c in conns:
        await c.close()

    ok, d = await expect_closed_with(A, "", "unauthorized", token="bogus")
    check("bad token -> disconnect unauthorized, close 1000, no welcome", ok, d)
    ok, d = await expect_closed_with(A, "", "unauthorized", token=None)
    check("no token -> unauthorized", ok, d)
    ok, d = await expect_closed_with(A, "", "unauthorized", token=None, headers={"Authorization": "Bearer nope"})
    check("bad bearer header -> unauthorized", ok, d)
    ok, d = await expect_closed_with(A, "", "token_expired", token="expired")
    check("token 'expired' -> disconnect token_expired reconnect:false, close 1000", ok, d)
    ok, d = await expect_closed_with(A, "", "token_expired", token=None, headers={"Cookie": "token=expired"})
    check("cookie token 'expired' -> token_expired", ok, d)

    await http("POST", A, "/control/expire_token?token=tok-zed")
    ok, d = await expect_closed_with(A, "", "token_expired", token="tok-zed")
    check("POST /control/expire_token makes tok-zed expire", ok, d)
    await http("POST", A, "/control/expire_token?clear=1")
    c = await Cable.open(A, token="tok-zed")
    check("expire_token clear=1 revives it", True)
    await c.close()

    # explode: 101, then nothing at all
    c = await Cable.open(A, token="explode", welcome=False)
    frames, code, _ = await c.until_closed(1.5)
    check("token 'explode' -> no welcome, no close (socket hangs)", frames == [] and code is None, f"{frames} {code}")
    await c.close()

    # one-time tickets
    st, t = await http("POST", A, "/control/ticket?user=tix")
    check("POST /control/ticket returns a ticket string", st == 200 and isinstance(t, str) and t.startswith("tkt-"), t)
    c = await Cable.open(A, query=f"ticket={t}", token=None)
    i = ident("EchoChannel")
    await c.subscribe(i)
    await c.perform(i, "whoami")
    m = await c.message(i)
    check("ticket authenticates once as its user", m.get("user") == "tix" and m.get("via") == "ticket", m)
    await c.close()
    ok, d = await expect_closed_with(A, f"ticket={t}", "unauthorized", token=None)
    check("replayed ticket -> unauthorized", ok, d)

    # anonymous toggle
    await http("POST", A, "/control/anonymous?allow=1")
    c = await Cable.open(A, token=None)
    await c.subscribe(i)
    await c.perform(i, "whoami")
    m = await c.message(i)
    check("anonymous allowed -> anon-xxxxxxxx", str(m.get("user", "")).startswith("anon-") and m.get("via") == "anonymous", m)
    await c.close()
    ok, d = await expect_closed_with(A, "", "unauthorized", token="bogus")
    check("anonymous mode still rejects a wrong token", ok, d)
    await http("POST", A, "/control/anonymous?allow=0")
    ok, d = await expect_closed_with(A, "", "unauthorized", token=None)
    check("anonymous off again -> unauthorized", ok, d)

    # origin policy
    try:
        c = await Cable.open(A, origin="http://evil.example")
        await c.close()
        check("wrong Origin -> HTTP 404", False, "connected")
    except InvalidStatus as e:
        check("wrong Origin -> HTTP 404", e.response.status_code == 404, e.response.status_code)
    for o in ("http://localhost:3000", "https://127.0.0.1", "http://localhost"):
        c = await Cable.open(A, origin=o)
        check(f"Origin {o} accepted", True)
        await c.close()

    # handshake log
    _, hs = await http("GET", A, "/control/handshakes")
    auths = [h.get("authorization") for h in hs["handshakes"]]
    check("GET /control/handshakes records the Authorization header", "Bearer tok-hh" in auths, auths[-5:])

    # delays
    t0 = time.monotonic()
    c = await Cable.open(A, query="delay_welcome=1")
    dt = time.monotonic() - t0
    check("delay_welcome=1 delays the welcome ~1 s", 0.9 <= dt < 3.0, f"{dt:.2f}s")
    await c.close()
    t0 = time.monotonic()
    c = await Cable.open(A, query="delay_upgrade=0.5")
    dt = time.monotonic() - t0
    check("delay_upgrade=0.5 delays the 101", 0.45 <= dt < 3.0, f"{dt:.2f}s")
    await c.close()


def raw_upgrade_status(port, query):
    """Sends a raw WebSocket upgrade request; returns (status line, headers dict) without following anything."""
    import socket as so

    s = so.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(
            (f"GET /cable?{query} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()
        )
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = s.recv(4096)
            if not d:
                break
            buf += d
        lines = buf.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        hdrs = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
        return lines[0], hdrs
    finally:
        s.close()


async def t_extras(A):
    c = await Cable.open(A, token="tok-rec")
    i = ident("EchoChannel", stream="rec")
    j = ident("ChatChannel", room="r1")
    await c.subscribe(i)
    await c.subscribe(j)
    await http("DELETE", A, "/control/recorded")
    for k in range(5):
        await c.perform(i, "record", k=k)
    await c.perform(i, "echo", fence=True)  # on the default pool of 4 this is only a rough fence
    await c.message(i)
    deadline = time.monotonic() + 3
    while True:
        _, r = await http("GET", A, "/control/recorded")
        if len(r["recorded"]) >= 5 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    ks = sorted(e["data"]["k"] for e in r["recorded"])
    check("record action: 5 performs land in GET /control/recorded (no reply frame)",
          ks == [0, 1, 2, 3, 4] and all(e["user"] == "rec" and e["identifier"] == i for e in r["recorded"]), r)
    _, st = await http("GET", A, "/control/connections?detail=1")
    subs = [x["subscriptions"] for x in st.get("connections", []) if x["user"] == "rec"]
    check("connections?detail=1 lists server-side subscriptions", subs and sorted(subs[0]) == sorted([i, j]), st)
    await c.send({"command": "unsubscribe", "identifier": j})
    deadline = time.monotonic() + 3
    while True:
        _, st = await http("GET", A, "/control/connections?detail=1")
        subs = [x["subscriptions"] for x in st.get("connections", []) if x["user"] == "rec"]
        if (subs and subs[0] == [i]) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    check("unsubscribe is visible in connections?detail=1", subs and subs[0] == [i], subs)
    await c.close()

    line, hdrs = await asyncio.to_thread(raw_upgrade_status, A, "redirect=ws%3A%2F%2F127.0.0.1%3A1%2Fcable&token=tok-x")
    check("/cable?redirect=URL -> 302 with Location", " 302 " in line and hdrs.get("location") == "ws://127.0.0.1:1/cable",
          f"{line} {hdrs}")
    try:
        c = await Cable.open(A, query="http_status=503")
        await c.close()
        check("/cable?http_status=503 -> HTTP 503", False, "connected")
    except InvalidStatus as e:
        check("/cable?http_status=503 -> HTTP 503", e.response.status_code == 503, e.response.status_code)

    # large message both ways (Rails has no size limit of its own)
    c = await Cable.open(A, token="tok-big")
    await c.subscribe(i)
    big = "b" * (2 * 1024 * 1024)
    await c.perform(i, "echo", big=big)
    m = await c.message(i, timeout=10)
    check("2 MiB echo round trip", m.get("big") == big)
    await c.close()


async def t_server_closes(A):
    i = ident("EchoChannel")
    c = await Cable.open(A, token="tok-kicky")
    await c.subscribe(i)
    await c.perform(i, "kick", reason="bye", reconnect=False)
    frames, code, rcvd = await c.until_closed()
    check("kick reason/reconnect:false -> disconnect frame + close 1000",
          frames == [{"type": "disconnect", "reason": "bye", "reconnect": False}] and code == 1000, f"{frames} {code}")

    c = await Cable.open(A, token="tok-kicky")
    await c.subscribe(i)
    await c.perform(i, "kick")
    frames, code, rcvd = await c.until_closed()
    check("kick without args -> reason null, reconnect true",
          frames == [{"type": "disconnect", "reason": None, "reconnect": True}] and code == 1000, f"{frames} {code}")

    c = await Cable.open(A, token="tok-closeme")
    await wait_count(A, 1)
    st, r = await http("POST", A, "/control/close?user=closeme&reason=custom_reason&reconnect=false")
    frames, code, rcvd = await c.until_closed()
    check("POST /control/close?user -> disconnect custom_reason reconnect:false + close 1000",
          frames == [{"type": "disconnect", "reason": "custom_reason", "reconnect": False}] and code == 1000,
          f"{r} {frames} {code}")

    c = await Cable.open(A, token="tok-remote")
    await wait_count(A, 1)
    st, r = await http("POST", A, "/control/disconnect?user=remote&reconnect=false")
    frames, code, rcvd = await c.until_closed()
    check("POST /control/disconnect -> close 1000 WITHOUT disconnect frame (Rails 6.1)",
          frames == [] and code == 1000 and rcvd, f"{frames} {code}")


async def t_counts_restart(A):
    st = await wait_count(A, 0)
    check("connection count starts at 0", st["count"] == 0, st)
    cs = [await Cable.open(A, token=f"tok-c{k}") for k in range(3)]
    st = await wait_count(A, 3)
    check("GET /control/connections counts 3 live connections", st["count"] == 3 and st["users"].get("c1") == 1, st)
    await cs[0].close()
    st = await wait_count(A, 2)
    check("count drops to 2 after a client close", st["count"] == 2, st)
    i = ident("EchoChannel")
    for c in cs[1:]:
        await c.subscribe(i)
    st, r = await http("POST", A, "/control/restart")
    results = [await c.until_closed() for c in cs[1:]]
    check("restart -> every client gets server_restart reconnect:true + close 1000",
          all(f == [{"type": "disconnect", "reason": "server_restart", "reconnect": True}] and code == 1000
              for f, code, _ in results), results)
    st = await wait_count(A, 0)
    check("count is 0 after restart (no stale entries)", st["count"] == 0 and st["rails_connections"] == 0
          and st["sockets"] == 0, st)
    # a client that leaves while connect still runs (delay_welcome) must not leave a ghost entry
    c = await Cable.open(A, token="tok-gone", query="delay_welcome=0.5", welcome=False)
    await c.close()
    await asyncio.sleep(1.0)
    st = await wait_count(A, 0)
    check("client gone during connect: no ghost (count, sockets, rails_connections all 0)",
          st["count"] == 0 and st["sockets"] == 0 and st["rails_connections"] == 0, st)
    c = await Cable.open(A, token="tok-after")
    typ, _ = await c.subscribe(i)
    await c.perform(i, "echo", k="after-restart")
    m = await c.message(i)
    st = await wait_count(A, 1)
    check("server works after restart (subscribe + echo), count 1",
          typ == "confirm_subscription" and m.get("k") == "after-restart" and st["count"] == 1, f"{m} {st}")
    await c.close()
    await wait_count(A, 0)


async def t_bursts(A):
    c = await Cable.open(A, token="tok-burst")
    i = ident("EchoChannel", stream="burst")
    await c.subscribe(i)
    await c.perform(i, "flood", count=1000)
    seqs = []
    while True:
        m = await c.message(i)
        if "burst_done" in m:
            break
        seqs.append(m["seq"])
    check("flood 1000 -> seq 0..999 in order then burst_done", seqs == list(range(1000)) and m == {"burst_done": 1000})
    t0 = time.monotonic()
    await c.perform(i, "burst", count=20000, size=16)
    n = 0
    ordered = True
    while True:
        m = await c.message(i, timeout=20)
        if "burst_done" in m:
            break
        ordered = ordered and m["seq"] == n
        n += 1
    dt = time.monotonic() - t0
    check("burst 20000x16B: all arrive in order then burst_done:20000",
          n == 20000 and ordered and m == {"burst_done": 20000}, f"{n} ordered={ordered}")
    info(f"burst 20000 msgs in {dt:.2f}s = {20000 / dt:.0f} msg/s")
    await c.close()

    # bench: 4 subs on one connection, round robin
    c = await Cable.open(A, token="tok-bench")
    ids = [ident("BenchChannel", sub=s) for s in range(4)]
    for x in ids:
        typ, _ = await c.subscribe(x)
    for via in ("broadcast", "transmit"):
        t0 = time.monotonic()
        st, r = await http("POST", A, f"/control/bench?count=2001&subs=4&via={via}")
        counts = {x: 0 for x in ids}
        ends = {}
        while len(ends) < 4:
            m = await c.recv(10)
            x = m.get("identifier")
            msg = m.get("message")
            if isinstance(msg, dict) and msg.get("end"):
                ends[x] = msg
            elif isinstance(msg, dict) and "seq" in msg:
                counts[x] += 1
        dt = time.monotonic() - t0
        # ends may overtake data on the broadcast path (adjacent inversions); drain a little
        deadline = time.monotonic() + 1.0
        while sum(counts.values()) < 2001 and time.monotonic() < deadline:
            try:
                m = await c.recv(0.2)
                if isinstance(m.get("message"), dict) and "seq" in m["message"]:
                    counts[m["identifier"]] += 1
            except asyncio.TimeoutError:
                pass
        want = [501, 500, 500, 500]
        check(f"bench via={via}: 2001 msgs round-robin over 4 subs + one end marker each",
              st == 200 and r["per_sub"] == want and [counts[x] for x in ids] == want
              and [ends[x]["sent"] for x in ids] == want, f"{r} {counts} {ends}")
        info(f"bench via={via}: 2001 msgs in {dt:.2f}s")
    await c.close()


async def t_redis():
    rport, rpid = redis_start()
    url = f"redis://127.0.0.1:{rport}/0"
    check("redis-server listens on 127.0.0.1 only", listen_addrs(rport) == {"127.0.0.1"}, listen_addrs(rport))
    B1, p1 = rails_start("--redis", url, "--prefix", "probe", "--env", "CABLE_ALLOW_ANONYMOUS=1")
    B2, p2 = rails_start("--redis", url, "--prefix", "probe", "--env", "CABLE_ALLOW_ANONYMOUS=1")
    _, h = await http("GET", B1, "/control/health")
    check("redis mode: health reports adapter redis + anonymous from env",
          h.get("adapter") == "redis" and h.get("allow_anonymous") is True, h)
    c = await Cable.open(B2, token="tok-bob")
    i = ident("EchoChannel", stream="xsrv")
    await c.subscribe(i)
    await asyncio.sleep(0.2)
    await http("POST", B1, "/control/broadcast?stream=xsrv", {"from": "server A"})
    m = await c.message(i)
    check("redis: broadcast on server A reaches client on server B", m == {"from": "server A"}, m)
    a = await Cable.open(B1, token=None)
    await a.subscribe(i)
    await a.perform(i, "whoami")
    who = await a.message(i)
    check("anonymous client (CABLE_ALLOW_ANONYMOUS=1)", str(who.get("user")).startswith("anon-"), who)
    await a.perform(i, "broadcast", hop="perform on A")
    m = await c.message(i)
    check("redis: perform broadcast on A reaches client on B", m == {"hop": "perform on A", "action": "broadcast"}, m)
    await a.close()
    st, r = await http("POST", B1, "/control/close?user=bob&reason=moved&reconnect=false")
    frames, code, _ = await c.until_closed()
    check("redis: /control/close on A closes bob on B with the disconnect frame",
          frames == [{"type": "disconnect", "reason": "moved", "reconnect": False}] and code == 1000, f"{frames} {code}")
    c = await Cable.open(B2, token="tok-bob")
    await wait_count(B2, 1)
    await http("POST", B1, "/control/disconnect?user=bob")
    frames, code, _ = await c.until_closed()
    check("redis: /control/disconnect on A closes bob on B (no frame)", frames == [] and code == 1000, f"{frames} {code}")
    for p in (p1, p2):
        stop_pid(p)
    subprocess.run([RAILS_SERVER, "stop-redis", str(rpid)], capture_output=True, timeout=20)


async def t_proxy(A):
    px = FaultProxy(A)
    i = ident("EchoChannel", stream="px")

    async def rtt(c, tag):
        t0 = time.monotonic()
        await c.perform(i, "echo", tag=tag)
        m = await c.message(i, timeout=10)
        return time.monotonic() - t0, m

    check("faultproxy listens on 127.0.0.1 only (data + control)",
          listen_addrs(px.port) == {"127.0.0.1"} and listen_addrs(px.control) == {"127.0.0.1"},
          f"{listen_addrs(px.port)} {listen_addrs(px.control)}")
    c = await Cable.open(px.port, token="tok-px")
    await c.subscribe(i)
    d, m = await rtt(c, "pass")
    check("proxy pass: welcome, subscribe, echo", m.get("tag") == "pass", m)
    base = d

    await px.post("/latency?ms=300")
    d, m = await rtt(c, "lat")
    check("proxy latency 300 ms: echo RTT >= 0.6 s", d >= 0.58 and m.get("tag") == "lat", f"{d:.3f}s")
    await px.post("/pass")
    d, m = await rtt(c, "pass2")
    check("proxy pass again: RTT back to normal", d < 0.5, f"{d:.3f}s base {base:.3f}s")

    await px.post("/throttle?bps=50000")
    t0 = time.monotonic()
    await c.perform(i, "burst", count=100, size=1000)  # ~110 KB down
    while "burst_done" not in await c.message(i, timeout=15):
        pass
    dt = time.monotonic() - t0
    check("proxy throttle 50 kB/s: 110 kB takes >= 1.6 s", 1.6 <= dt < 6, f"{dt:.2f}s")
    await px.post("/pass")
    t0 = time.monotonic()
    await c.perform(i, "burst", count=100, size=1000)
    while "burst_done" not in await c.message(i, timeout=15):
        pass
    check("proxy pass: same burst fast", time.monotonic() - t0 < 1.2, f"{time.monotonic() - t0:.2f}s")

    # blackhole: nothing flows (not even the 3 s pings), connection stays open; pass heals it
    await px.post("/blackhole")
    # A ping the proxy forwarded just before the blackhole took effect may still be on its way (or queued in
    # the client library): let those arrive first, and allow only pings among them.
    early = await frames_until_quiet(c, 0.3)
    check("proxy blackhole: only pings already in flight arrive after it starts",
          all(isinstance(m, dict) and m.get("type") == "ping" for m in early), early)
    await c.perform(i, "echo", tag="held")
    got = await frames_until_quiet(c, 3.6)
    check("proxy blackhole: no bytes for 3.6 s (no echo, no ping), no close", got == [], got)
    await px.post("/pass")
    m = await c.message(i, timeout=5)
    check("proxy pass after blackhole: held echo delivered", m.get("tag") == "held", m)

    # cut: half of the next server->client chunk, then close both sides
    st, r = await px.post("/cut")
    await c.perform(i, "echo", tag="cut", pad="y" * 2000)
    frames, code, rcvd = await c.until_closed(5)
    check("proxy cut: partial frame then abrupt close (1006, no close frame)",
          r.get("armed") == 1 and frames == [] and code == 1006 and not rcvd, f"{r} {frames} {code}")

    # cut, seen on raw bytes: the stream must end in the middle of a frame, with FIN (not RST)
    ok, detail = await asyncio.to_thread(raw_cut_check, px, i)
    check("proxy cut (raw bytes): stream ends mid-frame with FIN", ok, detail)

    # drop: RST the live connections once, mode stays pass
    c = await Cable.open(px.port, token="tok-px")
    st, r = await px.post("/drop")
    frames, code, rcvd = await c.until_closed(3)
    c = await Cable.open(px.port, token="tok-px")
    check("proxy drop: live connection reset (1006), next connect works",
          r.get("dropped", 0) >= 1 and code == 1006 and not rcvd, f"{r} {code}")
    await c.close()

    # reset: existing connections get RST, new ones too
    c = await Cable.open(px.port, token="tok-px")
    await px.post("/reset")
    frames, code, rcvd = await c.until_closed(3)
    check("proxy reset: live connection dropped without close frame", code == 1006 and not rcvd, f"{frames} {code}")
    try:
        c2 = await Cable.open(px.port, open_timeout=3)
        await c2.close()
        check("proxy reset: new connection fails", False, "connected")
    except (OSError, Exception) as e:  # noqa: BLE001
        check("proxy reset: new connection fails", not isinstance(e, asyncio.TimeoutError), repr(e))

    # refuse: every attempt accepted, timestamped, RST at once
    await px.post("/clear")
    await px.post("/refuse")
    errors = []
    for k in range(4):
        try:
            c2 = await Cable.open(px.port, open_timeout=3)
            await c2.close()
            errors.append("connected")
        except Exception as e:  # noqa: BLE001
            errors.append(type(e).__name__)
        await asyncio.sleep(0.25)
    s = await px.stats()
    gaps = [round(b - a, 3) for a, b in zip(s["accepts"], s["accepts"][1:])]
    check("proxy refuse: 4 attempts all fail, 4 accept timestamps ~0.25 s apart",
          "connected" not in errors and s["accepted"] == 4 and len(gaps) == 3 and all(0.2 <= g < 0.6 for g in gaps),
          f"{errors} gaps={gaps}")
    info(f"refuse: client errors {errors}")

    # stall-upgrade: TCP accepted, request read, never answered
    await px.post("/stall-upgrade")
    t0 = time.monotonic()
    try:
        c2 = await Cable.open(px.port, open_timeout=1.0)
        await c2.close()
        check("proxy stall-upgrade: handshake never completes", False, "connected")
    except (asyncio.TimeoutError, TimeoutError):
        s = await px.stats()
        check("proxy stall-upgrade: handshake times out, connection was held",
              time.monotonic() - t0 >= 0.9 and s["accept_modes"][-1] == "stall-upgrade", s["accept_modes"][-3:])
    await px.post("/pass")
    c = await Cable.open(px.port, token="tok-px")
    await c.subscribe(i)
    d, m = await rtt(c, "final")
    s = await px.stats()
    check("proxy pass: works again, stats JSON has counters",
          m.get("tag") == "final" and s["active"] >= 1 and s["bytes_down"] > 0 and s["mode"] == "pass", s["active"])
    await c.close()

    st, r = await px.post("/shutdown")
    try:
        px.proc.wait(3)
        ok = True
    except subprocess.TimeoutExpired:
        ok = False
    check("proxy POST /shutdown exits", ok and r.get("ok"), r)

    # parent/pid watch: the proxy exits when the watched pid is gone
    sleeper = subprocess.Popen(["sleep", "30"])
    px2 = FaultProxy(A, ["--parent-pid", str(sleeper.pid)])
    sleeper.kill()
    sleeper.wait()
    try:
        px2.proc.wait(3)
        ok = True
    except subprocess.TimeoutExpired:
        ok = False
    check("proxy exits when --parent-pid is gone", ok)


def raw_cut_check(px, identifier):
    """Raw TCP client through the proxy: handshake, welcome, subscribe, arm cut, echo 20 kB, read to EOF."""
    import base64
    import socket as so

    s = so.create_connection(("127.0.0.1", px.port), timeout=5)
    try:
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall(
            (f"GET /cable?token=tok-raw HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
             f"Sec-WebSocket-Protocol: actioncable-v1-json\r\n\r\n").encode()
        )
        buf = b""

        def frames_in(b):
            """Parses unmasked server frames; returns (list of payloads, leftover bytes)."""
            out = []
            while len(b) >= 2:
                n = b[1] & 0x7F
                h = 2
                if n == 126:
                    if len(b) < 4:
                        break
                    n, h = int.from_bytes(b[2:4], "big"), 4
                elif n == 127:
                    if len(b) < 10:
                        break
                    n, h = int.from_bytes(b[2:10], "big"), 10
                if len(b) < h + n:
                    break
                out.append(b[h:h + n])
                b = b[h + n:]
            return out, b

        def mask(payload):
            m = os.urandom(4)
            body = bytes(c ^ m[k % 4] for k, c in enumerate(payload))
            ln = len(payload)
            hdr = bytes([0x81, 0x80 | ln]) if ln < 126 else bytes([0x81, 0x80 | 126]) + ln.to_bytes(2, "big")
            return hdr + m + body

        while b"\r\n\r\n" not in buf:
            buf += s.recv(4096)
        head, buf = buf.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            return False, head[:80]
        got = []
        while not any(b"welcome" in f for f in got):
            buf += s.recv(4096)
            fs, buf = frames_in(buf)
            got += fs
        s.sendall(mask(json.dumps({"command": "subscribe", "identifier": identifier}).encode()))
        while not any(b"confirm_subscription" in f for f in got):
            buf += s.recv(4096)
            fs, buf = frames_in(buf)
            got += fs
        _, r = _http("POST", px.control, "/cut")
        s.sendall(mask(json.dumps({"command": "message", "identifier": identifier,
                                   "data": json.dumps({"action": "echo", "pad": "z" * 20000})}).encode()))
        after = b""
        rst = False
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                after += d
        except ConnectionResetError:
            rst = True
        fs, left = frames_in(buf + after)
        mid_frame = len(left) > 0
        return (r.get("armed") == 1 and not rst and mid_frame and len(after) > 0,
                f"armed={r.get('armed')} bytes_after_cut={len(after)} whole_frames={len(fs)} "
                f"leftover={len(left)} rst={rst}")
    finally:
        s.close()


def listen_addrs(port):
    """Local addresses of LISTEN sockets on `port`, from /proc/net/tcp{,6}."""
    addrs = set()
    for fn, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        try:
            with open(fn) as f:
                rows = f.read().splitlines()[1:]
        except FileNotFoundError:
            continue
        for row in rows:
            cols = row.split()
            local, state = cols[1], cols[3]
            ip_hex, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:
                continue
            if v6:
                addrs.add("v6:" + ip_hex)
            else:
                addrs.add(".".join(str(b) for b in reversed(bytes.fromhex(ip_hex))))
    return addrs


async def t_pings(A):
    _, h = await http("GET", A, "/control/health")
    check("default server: beat_interval 3 (Rails)", h.get("beat_interval") == 3, h)
    P, pid = rails_start("--env", "CABLE_BEAT_INTERVAL=0.5")
    _, h = await http("GET", P, "/control/health")
    check("CABLE_BEAT_INTERVAL=0.5 is applied", h.get("beat_interval") == 0.5, h)
    c1 = await Cable.open(P, token="tok-p1")
    c2 = await Cable.open(P, token="tok-p2", query="no_pings=1")

    async def pings_within(c, secs):
        n = 0
        kinds = set()
        deadline = time.monotonic() + secs
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return n, kinds
            try:
                m = await c.recv(left, pings=True)
            except asyncio.TimeoutError:
                return n, kinds
            if m.get("type") == "ping":
                n += 1
                kinds.add(type(m.get("message")).__name__)

    (n1, k1), (n2, _) = await asyncio.gather(pings_within(c1, 2.2), pings_within(c2, 2.2))
    check("fast pings: >= 3 pings in 2.2 s, message is an integer", n1 >= 3 and k1 == {"int"}, f"{n1} {k1}")
    check("?no_pings=1: that connection gets no pings", n2 == 0, n2)
    await http("POST", P, "/control/pings?enabled=0")
    n1, _ = await pings_within(c1, 1.3)
    check("POST /control/pings?enabled=0 stops pings", n1 == 0, n1)
    await http("POST", P, "/control/pings?enabled=1")
    n1, _ = await pings_within(c1, 1.3)
    check("POST /control/pings?enabled=1 resumes pings", n1 >= 1, n1)
    await c1.close()
    await c2.close()
    check("fixture server listens on 127.0.0.1 only", listen_addrs(P) == {"127.0.0.1"}, listen_addrs(P))
    stop_pid(pid)


async def t_watchdog():
    # a server can come back on the same port right after a stop (client reconnect tests)
    port, pid = rails_start()
    c = await Cable.open(port, token="tok-sameport")
    await asyncio.to_thread(stop_pid, pid)
    frames, code, rcvd = await c.until_closed(3)
    check("puma stop (TERM): clients see an abrupt close (1006, no frame)", code == 1006 and not rcvd, f"{frames} {code}")
    t0 = time.monotonic()
    port2, pid2 = rails_start("--port", str(port))
    c = await Cable.open(port, token="tok-sameport")
    check("restart on the same port right after stop", port2 == port, f"{time.monotonic() - t0:.2f}s")
    await c.close()
    await asyncio.to_thread(stop_pid, pid2)

    port, pid = rails_start("--max-lifetime", "1")
    deadline = time.monotonic() + 8
    alive = True
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().split(")")[-1].split()[0]
            if state in ("Z", "X"):
                alive = False
                break
        except FileNotFoundError:
            alive = False
            break
        await asyncio.sleep(0.2)
    check("rails server exits after CABLE_MAX_LIFETIME", not alive)


TESTS = ["basics", "reject", "chat", "auth", "extras", "server_closes", "counts_restart", "bursts", "pings", "redis", "proxy", "watchdog"]


async def run(only):
    t_start = time.monotonic()
    A, _ = rails_start()
    log(f"server A on 127.0.0.1:{A} (start {time.monotonic() - t_start:.2f}s)")
    for name in TESTS:
        if only and name not in only:
            continue
        fn = globals()[f"t_{name}"]
        args = [] if name in ("redis", "watchdog") else [A]
        t0 = time.monotonic()
        log(f"[{name}]")
        try:
            await asyncio.wait_for(fn(*args), 60)
        except Exception as e:  # noqa: BLE001
            check(f"{name}: no exception", False, f"{type(e).__name__}: {e}")
        log(f"  ({time.monotonic() - t0:.1f}s)")


def main():
    global VERBOSE, PID_FILE, LOG_DIR
    ap = argparse.ArgumentParser()
    ap.add_argument("--pid-file")
    ap.add_argument("--only", default="")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--keep-logs", action="store_true")
    args = ap.parse_args()
    import shutil
    import tempfile
    LOG_DIR = tempfile.mkdtemp(prefix="cable-probe.")
    VERBOSE = args.verbose
    PID_FILE = args.pid_file
    only = [x for x in args.only.split(",") if x]

    def on_term(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    t0 = time.monotonic()
    try:
        asyncio.run(run(only))
    finally:
        cleanup()
    log(f"probe took {time.monotonic() - t0:.1f}s")
    if FAILURES:
        log("failed: " + ", ".join(FAILURES))
        for name in sorted(os.listdir(LOG_DIR)):
            if name.endswith(".log"):
                with open(os.path.join(LOG_DIR, name), errors="replace") as f:
                    tail = f.readlines()[-25:]
                log(f"--- last lines of {name}:")
                log("".join(tail).rstrip())
        log(f"logs kept in {LOG_DIR}")
    elif args.keep_logs:
        log(f"logs kept in {LOG_DIR}")
    else:
        shutil.rmtree(LOG_DIR, ignore_errors=True)
    log(f"{PASSED} passed, {FAILED} failed")
    sys.exit(1 if FAILED or PASSED == 0 else 0)


if __name__ == "__main__":
    main()
