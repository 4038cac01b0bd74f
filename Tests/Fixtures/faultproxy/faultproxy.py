#!/usr/bin/env python3
"""Fault-injecting TCP proxy for the CableReactive integration tests (asyncio, stdlib only).

    python3 faultproxy.py --target 127.0.0.1:PORT [--listen-port 0] [--control-port 0]
                          [--max-lifetime 600] [--parent-pid PID]

Prints ONE JSON line on stdout once both ports listen, then nothing else:
    {"listen": P, "control": C, "pid": PID, "target": "127.0.0.1:PORT"}
Clients connect to 127.0.0.1:P; the HTTP control API is on 127.0.0.1:C (see README.md next to this
file's parent, Tests/Fixtures/README.md, for every endpoint). Exits on POST /shutdown, when its
parent process dies (or --parent-pid is gone), or after --max-lifetime seconds.
Everything listens on 127.0.0.1 only.
"""

import argparse
import asyncio
import errno
import json
import os
import signal
import socket
import struct
import sys
import time
import urllib.parse

CHUNK = 65536
CONNECT_TIMEOUT = 5.0
STALL_READ_MAX = 65536
ACCEPT_LOG_MAX = 10000
MODES = ("pass", "blackhole", "latency", "throttle", "reset", "refuse", "stall-upgrade")

EOF = object()
CUT = object()


def rst_close(sock):
    """Abortive close: SO_LINGER {on, 0} then close() makes the kernel send RST instead of FIN."""
    if sock is None:
        return
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


def fin_close(sock):
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class Conn:
    def __init__(self, proxy, cid, client):
        self.proxy = proxy
        self.id = cid
        self.client = client
        self.upstream = None
        self.tasks = []
        self.kind = "forward"  # or "stalled"
        self.cut_armed = False
        # Cleared by POST /handover: this connection's bytes stop for good, as a socket on a vanished interface.
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.closed = False
        self.done_dirs = 0

    def close(self, rst=False):
        if self.closed:
            return
        self.closed = True
        current = asyncio.current_task()
        for t in self.tasks:
            if t is not current:
                t.cancel()
        # Close the fds one loop iteration later: the cancelled sock_recv/sock_sendall futures remove
        # their selector registrations (by fd number) in callbacks that are already queued; closing
        # first could let a new connection reuse the fd number and lose its registration.
        closer = rst_close if rst else fin_close
        if rst:
            self.proxy.rst_sent += 1
        client, upstream = self.client, self.upstream
        asyncio.get_running_loop().call_soon(lambda: (closer(client), closer(upstream)))
        self.proxy.conns.pop(self.id, None)


class Proxy:
    def __init__(self, target_host, target_port):
        self.target = (target_host, target_port)
        self.mode = "pass"
        self.latency_ms = 0.0
        self.throttle_bps = 0
        self.conns = {}
        self.next_id = 1
        self.accepted = 0
        self.accepts = []  # monotonic seconds (CLOCK_MONOTONIC, comparable across processes on Linux)
        self.accepts_wall = []
        self.accept_modes = []
        self.rst_sent = 0
        self.bytes_up = 0  # client -> server
        self.bytes_down = 0  # server -> client
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.stop = asyncio.Event()
        self.listener = None

    # ---- mode control -----------------------------------------------------------------------------
    def set_mode(self, mode, params):
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode}")
        result = {}
        if mode == "latency":
            self.latency_ms = float(params.get("ms", "0"))
            self.throttle_bps = 0
        elif mode == "throttle":
            self.throttle_bps = int(float(params.get("bps", params.get("bytes_per_sec", "0"))))
            self.latency_ms = 0.0
        elif mode == "pass":
            self.latency_ms = 0.0
            self.throttle_bps = 0
        self.mode = mode
        if mode == "blackhole":
            self.flowing.clear()
        else:
            self.flowing.set()
        dropped = 0
        if mode == "reset" or (mode == "refuse" and str(params.get("drop", "")).lower() in ("1", "true", "yes")):
            for c in list(self.conns.values()):
                c.close(rst=True)
                dropped += 1
        result["dropped"] = dropped
        return result

    def arm_cut(self):
        n = 0
        for c in self.conns.values():
            if c.kind == "forward" and not c.closed:
                c.cut_armed = True
                n += 1
        return n

    def stats(self):
        return {
            "mode": self.mode,
            "latency_ms": self.latency_ms,
            "throttle_bps": self.throttle_bps,
            "active": len(self.conns),
            "active_forwarding": sum(1 for c in self.conns.values() if c.kind == "forward"),
            "active_stalled": sum(1 for c in self.conns.values() if c.kind == "stalled"),
            "accepted": self.accepted,
            "accepts": self.accepts,
            "accepts_wall": self.accepts_wall,
            "accept_modes": self.accept_modes,
            "rst_sent": self.rst_sent,
            "bytes_up": self.bytes_up,
            "bytes_down": self.bytes_down,
            "now": time.monotonic(),
            "pid": os.getpid(),
            "target": f"{self.target[0]}:{self.target[1]}",
        }

    def clear_stats(self):
        self.accepted = 0
        self.accepts = []
        self.accepts_wall = []
        self.accept_modes = []
        self.rst_sent = 0
        self.bytes_up = 0
        self.bytes_down = 0

    # ---- data path --------------------------------------------------------------------------------
    async def accept_loop(self):
        loop = asyncio.get_running_loop()
        while not self.stop.is_set():
            try:
                client, _ = await loop.sock_accept(self.listener)
            except asyncio.CancelledError:
                raise
            except OSError as e:
                if e.errno in (errno.EMFILE, errno.ENFILE):
                    await asyncio.sleep(0.1)
                    continue
                raise
            client.setblocking(False)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.accepted += 1
            if len(self.accepts) < ACCEPT_LOG_MAX:
                self.accepts.append(round(time.monotonic(), 6))
                self.accepts_wall.append(round(time.time(), 6))
                self.accept_modes.append(self.mode)
            if self.mode in ("refuse", "reset"):
                rst_close(client)
                self.rst_sent += 1
                continue
            cid = self.next_id
            self.next_id += 1
            conn = Conn(self, cid, client)
            self.conns[cid] = conn
            if self.mode == "stall-upgrade":
                conn.kind = "stalled"
                conn.tasks.append(asyncio.create_task(self.stall(conn)))
            else:
                conn.tasks.append(asyncio.create_task(self.open_upstream(conn)))

    async def stall(self, conn):
        """Read the HTTP upgrade request and never answer; keep reading (discarding) until EOF."""
        loop = asyncio.get_running_loop()
        total = 0
        try:
            while True:
                data = await loop.sock_recv(conn.client, CHUNK)
                if not data:
                    break
                total += len(data)
                self.bytes_up += len(data)
                if total > 16 * STALL_READ_MAX:
                    break
        except asyncio.CancelledError:
            raise
        except OSError:
            pass
        conn.close()

    async def open_upstream(self, conn):
        loop = asyncio.get_running_loop()
        up = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        up.setblocking(False)
        conn.upstream = up
        try:
            await asyncio.wait_for(loop.sock_connect(up, self.target), CONNECT_TIMEOUT)
        except asyncio.CancelledError:
            raise
        except (OSError, asyncio.TimeoutError):
            # Upstream is down: look like a refused connection to the client.
            conn.close(rst=True)
            return
        up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if conn.closed:
            return
        for src, dst, down in ((conn.client, up, False), (up, conn.client, True)):
            q = asyncio.Queue(maxsize=64)
            conn.tasks.append(asyncio.create_task(self.reader(conn, src, q, down)))
            conn.tasks.append(asyncio.create_task(self.writer(conn, dst, q, down)))

    async def reader(self, conn, src, q, down):
        loop = asyncio.get_running_loop()
        try:
            while True:
                # blackhole: stop reading, so bytes pile up in the kernel buffers (no ACK once they fill)
                await self.flowing.wait()
                await conn.flowing.wait()
                data = await loop.sock_recv(src, CHUNK)
                # A read already waiting when /handover came: its bytes are lost with the interface.
                await conn.flowing.wait()
                if not data:
                    await q.put(EOF)
                    return
                if down:
                    self.bytes_down += len(data)
                else:
                    self.bytes_up += len(data)
                due = time.monotonic() + self.latency_ms / 1000.0 if self.mode == "latency" else 0.0
                if down and conn.cut_armed:
                    half = data[: len(data) // 2]
                    if half:
                        await q.put((due, half))
                    await q.put(CUT)
                    return
                await q.put((due, data))
        except asyncio.CancelledError:
            raise
        except OSError as e:
            # Peer reset: reset the other side too.
            conn.close(rst=isinstance(e, ConnectionResetError))

    async def writer(self, conn, dst, q, down):
        loop = asyncio.get_running_loop()
        next_send = time.monotonic()
        try:
            while True:
                item = await q.get()
                if item is EOF:
                    try:
                        dst.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    conn.done_dirs += 1
                    if conn.done_dirs >= 2:
                        conn.close()
                    return
                if item is CUT:
                    conn.close()
                    return
                due, data = item
                delay = due - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                await self.flowing.wait()
                bps = self.throttle_bps if self.mode == "throttle" else 0
                if bps > 0:
                    step = max(1, bps // 50)
                    for i in range(0, len(data), step):
                        piece = data[i : i + step]
                        now = time.monotonic()
                        if next_send > now:
                            await asyncio.sleep(next_send - now)
                        next_send = max(next_send, time.monotonic()) + len(piece) / bps
                        await loop.sock_sendall(dst, piece)
                else:
                    await loop.sock_sendall(dst, data)
                    next_send = time.monotonic()
        except asyncio.CancelledError:
            raise
        except OSError as e:
            conn.close(rst=isinstance(e, ConnectionResetError))


# ---- HTTP control -------------------------------------------------------------------------------------
async def handle_control(proxy, reader, writer):
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5.0)
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for ln in lines[1:]:
            if ":" in ln:
                k, v = ln.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length", "0") or 0)
        body = await asyncio.wait_for(reader.readexactly(n), 5.0) if n > 0 else b""
        url = urllib.parse.urlsplit(target)
        params = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        if body:
            try:
                b = json.loads(body)
                if isinstance(b, dict):
                    params.update({k: str(v) for k, v in b.items()})
            except ValueError:
                pass
        status, obj = route(proxy, method, url.path.rstrip("/") or "/", params)
    except Exception as e:  # noqa: BLE001 - report any control error to the caller
        status, obj = 400, {"ok": False, "error": f"{type(e).__name__}: {e}"}
    payload = (json.dumps(obj) + "\n").encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}.get(status, "OK")
    try:
        writer.write(
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode() + payload
        )
        await asyncio.wait_for(writer.drain(), 5.0)
    except Exception:  # noqa: BLE001
        pass
    finally:
        writer.close()


def route(proxy, method, path, params):
    name = path.lstrip("/")
    if method == "GET" and name in ("stats", "mode", "health"):
        return 200, proxy.stats()
    if method != "POST":
        return 404, {"ok": False, "error": f"no such endpoint {method} {path}"}
    if name == "mode":  # POST /mode?name=latency&ms=100
        name = params.get("name", "")
    if name in MODES:
        res = proxy.set_mode(name, params)
        return 200, {"ok": True, "mode": proxy.mode, **res}
    if name == "drop":  # RST every live connection once; the mode is unchanged
        n = len(proxy.conns)
        for c in list(proxy.conns.values()):
            c.close(rst=True)
        return 200, {"ok": True, "dropped": n}
    if name == "handover":  # every live connection goes silent for good (nothing closed); new ones pass
        live = [c for c in proxy.conns.values() if not c.closed]
        for c in live:
            c.flowing.clear()
        return 200, {"ok": True, "silenced": len(live)}
    if name == "cut":
        return 200, {"ok": True, "armed": proxy.arm_cut()}
    if name == "clear":
        proxy.clear_stats()
        return 200, {"ok": True}
    if name == "shutdown":
        proxy.stop.set()
        return 200, {"ok": True}
    return 404, {"ok": False, "error": f"no such endpoint {method} {path}"}


async def watchdog(proxy, parent_pid, original_ppid, max_lifetime):
    start = time.monotonic()
    while not proxy.stop.is_set():
        await asyncio.sleep(0.25)
        if max_lifetime > 0 and time.monotonic() - start > max_lifetime:
            print(f"faultproxy: max lifetime {max_lifetime}s reached", file=sys.stderr)
            break
        if os.getppid() != original_ppid:
            print("faultproxy: parent died", file=sys.stderr)
            break
        if parent_pid:
            try:
                os.kill(parent_pid, 0)
            except ProcessLookupError:
                print(f"faultproxy: watched pid {parent_pid} is gone", file=sys.stderr)
                break
            except PermissionError:
                pass
    proxy.stop.set()


async def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", required=True, help="HOST:PORT to forward to")
    ap.add_argument("--listen-port", type=int, default=0)
    ap.add_argument("--control-port", type=int, default=0)
    ap.add_argument("--max-lifetime", type=float, default=600.0, help="seconds, 0 = unlimited")
    ap.add_argument("--parent-pid", type=int, default=0, help="also exit when this pid is gone")
    args = ap.parse_args()
    host, _, port = args.target.rpartition(":")
    original_ppid = os.getppid()

    proxy = Proxy(host or "127.0.0.1", int(port))
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind(("127.0.0.1", args.listen_port))
    lst.listen(128)
    lst.setblocking(False)
    proxy.listener = lst
    ctl = await asyncio.start_server(lambda r, w: handle_control(proxy, r, w), "127.0.0.1", args.control_port)
    control_port = ctl.sockets[0].getsockname()[1]

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, proxy.stop.set)

    print(
        json.dumps(
            {"listen": lst.getsockname()[1], "control": control_port, "pid": os.getpid(), "target": args.target}
        ),
        flush=True,
    )
    tasks = [
        asyncio.create_task(proxy.accept_loop()),
        asyncio.create_task(watchdog(proxy, args.parent_pid, original_ppid, args.max_lifetime)),
    ]
    await proxy.stop.wait()
    await asyncio.sleep(0.05)  # let the /shutdown reply go out
    for t in tasks:
        t.cancel()
    for c in list(proxy.conns.values()):
        c.close()
    await asyncio.sleep(0.01)  # run the deferred socket closes
    ctl.close()
    lst.close()


if __name__ == "__main__":
    asyncio.run(main())
