#!/usr/bin/env python3
"""An independent WebSocket server for the transport integration tests (Python `websockets`).

Prints "PORT <n>" once listening and exits when its stdin closes, so a crashed test run cannot
leave it behind. Behaviour is chosen by the request path:

  /echo                  echo every message back
  /welcome               send "welcome" in the same write as the 101 answer's first frame, then echo
  /fragmented            send one message in three fragments, then echo
  /ping                  ping with payload "are you there", wait for the pong, send "pong:<payload>"
  /close?code=N&reason=R close with code N and reason R
  /close-empty           close with an empty close frame
  /drop                  drop the TCP connection without a close frame
  /raw?hex=H             write the bytes H (hex) as they are, then wait for the client to close
  /last-close?id=K       send "<code> <reason>" that the client's close frame carried on ?id=K
  /status/N              refuse the upgrade with HTTP status N (and a body that must not leak)
  /hang                  never answer the upgrade
  /bad-accept            answer 101 with a wrong Sec-WebSocket-Accept
  /bogus-subprotocol     answer 101 choosing the subprotocol "bogus"
  /sni                   (TLS) send the SNI server name the client sent, or "none"
Any path accepts the subprotocol "chat" or "actioncable-v1-json" when offered; ?id=K records the
client's close code for /last-close.
"""
import argparse
import asyncio
import os
import ssl
import sys
import threading
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import serve

KNOWN_SUBPROTOCOLS = ["actioncable-v1-json", "chat"]
closes = {}
server_names = {}  # id(SSLObject) -> SNI name the client sent (None: no SNI)


def record_server_name(ssl_object, server_name, context):
    server_names[id(ssl_object)] = server_name


def route(request_path):
    parts = urlsplit(request_path)
    return parts.path, {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}


def select_subprotocol(connection, offered):
    for name in offered:
        if name in KNOWN_SUBPROTOCOLS:
            return name
    return None


async def process_request(connection, request):
    path, _ = route(request.path)
    if path.startswith("/status/"):
        return connection.respond(int(path.split("/")[2]), "secret body that must not leak\n")
    if path == "/hang":
        await asyncio.sleep(3600)
    return None


def process_response(connection, request, response):
    path, _ = route(request.path)
    if path == "/bad-accept":
        del response.headers["Sec-WebSocket-Accept"]
        response.headers["Sec-WebSocket-Accept"] = "AAAAAAAAAAAAAAAAAAAAAAAAAAA="
    if path == "/bogus-subprotocol":
        if "Sec-WebSocket-Protocol" in response.headers:
            del response.headers["Sec-WebSocket-Protocol"]
        response.headers["Sec-WebSocket-Protocol"] = "bogus"
    return None


async def echo(ws):
    async for message in ws:
        await ws.send(message)


async def handler(ws):
    path, query = route(ws.request.path)
    try:
        if path == "/echo":
            await echo(ws)
        elif path == "/welcome":
            await ws.send("welcome")
            await echo(ws)
        elif path == "/fragmented":
            await ws.send(["frag", "mented ", "message"])
            await echo(ws)
        elif path == "/ping":
            waiter = await ws.ping(b"are you there")
            await waiter
            await ws.send("pong:are you there")
            await echo(ws)
        elif path == "/close":
            await ws.close(code=int(query.get("code", "1000")), reason=query.get("reason", ""))
        elif path == "/close-empty":
            ws.transport.write(b"\x88\x00")
            await ws.wait_closed()
        elif path == "/drop":
            ws.transport.abort()
        elif path == "/raw":
            ws.transport.write(bytes.fromhex(query["hex"]))
            await ws.wait_closed()
        elif path == "/sni":
            ssl_object = ws.transport.get_extra_info("ssl_object")
            await ws.send(str(server_names.get(id(ssl_object))) if ssl_object else "not TLS")
            await echo(ws)
        elif path == "/last-close":
            code, reason = closes.get(query.get("id", ""), (None, None))
            await ws.send(f"{code} {reason}")
            await echo(ws)
        else:
            await echo(ws)
    except Exception:
        pass
    finally:
        await ws.wait_closed()
        if "id" in query and path != "/last-close":
            closes[query["id"]] = (ws.close_code, ws.close_reason)


def exit_when_stdin_closes():
    sys.stdin.buffer.read()
    os._exit(0)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    args = parser.parse_args()
    context = None
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        context.sni_callback = record_server_name
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    async with serve(
        handler,
        args.host,
        0,
        ssl=context,
        max_size=16 * 1024 * 1024,
        select_subprotocol=select_subprotocol,
        process_request=process_request,
        process_response=process_response,
        ping_interval=None,
        open_timeout=30,
    ) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"PORT {port}", flush=True)
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    asyncio.run(main())
