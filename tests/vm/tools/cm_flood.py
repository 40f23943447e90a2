#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Hostile TCP clients of an iWARP listener (stdlib only), for
tests/vm/268-cm-hostile.sh.

    cm_flood.py flood   --server IP --port PORT --secs S [--until FILE]
                        [--hold-ms MS] [--max-open N]
    cm_flood.py silent  --server IP --port PORT --count N --until FILE
                        [--max-secs S] [--mpa]
    cm_flood.py request --server IP --port PORT [--wait S] [--hold S]
                        [--after-ms MS] [--half-close]

flood: prints "flooding", then, until FILE exists (S seconds at most),
connects to IP:PORT as fast as it can (non-blocking, at most N connections
open at once), sends a valid MPA request (rev 2) as soon as a connection
is up, reads nothing, and resets the connection HOLD_MS later. Refused
connections are counted and tried again at once. Prints its counts at
the end; exit 0.

silent: opens N connections at once and sends nothing. Prints how many
are up after 1.5 s ("connected K of N"), holds them until FILE exists
(at most S seconds), then closes them all and prints how many came up in
all; exit 0. With --mpa each connection sends one valid MPA request
(rev 2) as soon as it is up, also one that comes up late (its SYN was
dropped and sent again), and then nothing more: a request the listener's
consumer may leave unanswered.

request: one connection, a valid MPA request (rev 2; MS milliseconds
after the connection is up, default at once), then waits up to S
seconds for the server's MPA reply or for it to close the connection.
Prints "local IP:PORT" first, then what it saw: "mpa reply: ... pd 'TEXT'"
(TEXT: the ULP private data of the reply) or "closed by the server (how)
after N s". After a reply it keeps the connection HOLD seconds (or until
the server closes it). Exit 0 when it saw a reply or a close, 1 when
neither came within S seconds. With --half-close the peer shuts its
sending side (a FIN) right after the request, so that the FIN reaches
the server before its consumer answers; the end of the connection is then
printed with the seconds since the reply: "closed by the server after N
s".
"""

import argparse
import errno
import os
import selectors
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iwarp_peer  # noqa: E402  (mpa_request, read_reply)


def say(msg):
    print(msg, flush=True)


def rst_on_close(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def flood(args):
    req = iwarp_peer.mpa_request(2)
    addr = (args.server, args.port)
    sel = selectors.DefaultSelector()
    connecting = {}         # socket -> when connect() started
    held = []               # (when to reset, socket), oldest first
    n = dict(attempts=0, connected=0, refused=0, requests=0, timeouts=0,
             resets=0, errors=0)
    say("flooding %s:%d" % addr)
    t0 = time.monotonic()
    end = t0 + args.secs
    hold = args.hold_ms / 1000.0
    look = t0
    while True:
        now = time.monotonic()
        if now >= end:
            break
        if now - look > 0.2:
            look = now
            if os.path.exists(args.until):
                break
        opened = 0
        while len(connecting) + len(held) < args.max_open and opened < 16:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            rst_on_close(s)
            n["attempts"] += 1
            opened += 1
            rc = s.connect_ex(addr)
            if rc not in (0, errno.EINPROGRESS):
                n["refused" if rc == errno.ECONNREFUSED else "errors"] += 1
                s.close()
                continue
            connecting[s] = now
            sel.register(s, selectors.EVENT_WRITE)
        for key, _ in sel.select(timeout=0.005):
            s = key.fileobj
            sel.unregister(s)
            del connecting[s]
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                n["refused" if err == errno.ECONNREFUSED else
                  "resets" if err == errno.ECONNRESET else "errors"] += 1
                s.close()
                continue
            n["connected"] += 1
            try:
                s.send(req)
                n["requests"] += 1
            except OSError:
                n["resets"] += 1
            held.append((time.monotonic() + hold, s))
        now = time.monotonic()
        while held and held[0][0] <= now:
            held.pop(0)[1].close()
        for s, t in list(connecting.items()):
            if now - t > 1.0:
                sel.unregister(s)
                del connecting[s]
                n["timeouts"] += 1
                s.close()
    for s in list(connecting):
        sel.unregister(s)
        s.close()
    for _, s in held:
        s.close()
    secs = time.monotonic() - t0
    say("flood: %.1f s, %d attempts (%.0f/s), %d connected, %d MPA requests "
        "sent, %d refused, %d reset, %d connect timeouts, %d other errors" %
        (secs, n["attempts"], n["attempts"] / secs, n["connected"],
         n["requests"], n["refused"], n["resets"], n["timeouts"],
         n["errors"]))
    return 0


def silent(args):
    req = iwarp_peer.mpa_request(2)
    addr = (args.server, args.port)
    sel = selectors.DefaultSelector()
    socks = []
    n = dict(up=0, sent=0, failed=0)
    for _ in range(args.count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(addr)
        socks.append(s)
        sel.register(s, selectors.EVENT_WRITE)

    def wait_up(secs):
        """Take the connections that come up within secs seconds."""
        end = time.monotonic() + secs
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            if not sel.get_map():
                time.sleep(left)
                return
            for key, _ in sel.select(timeout=left):
                s = key.fileobj
                sel.unregister(s)
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    n["failed"] += 1
                    continue
                n["up"] += 1
                if args.mpa:
                    try:
                        s.send(req)
                        n["sent"] += 1
                    except OSError:
                        pass

    wait_up(1.5)
    if args.mpa:
        say("connected %d of %d, sent %d MPA requests" %
            (n["up"], args.count, n["sent"]))
    else:
        say("connected %d of %d, sending nothing" % (n["up"], args.count))
    end = time.monotonic() + args.max_secs
    while not os.path.exists(args.until) and time.monotonic() < end:
        wait_up(0.1)
    for s in socks:
        s.close()
    say("closed all %d: %d had come up, %d failed to connect, %d MPA "
        "requests sent" % (args.count, n["up"], n["failed"], n["sent"]))
    return 0


def request(args):
    deadline = time.monotonic() + args.wait
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(args.wait)
    s.connect((args.server, args.port))
    local = s.getsockname()
    say("local %s:%d" % (local[0], local[1]))
    time.sleep(args.after_ms / 1000.0)
    s.sendall(iwarp_peer.mpa_request(2))
    if args.half_close:
        s.shutdown(socket.SHUT_WR)
        say("sent: MPA request (rev 2) and a FIN, waiting for the reply")
    else:
        say("sent: MPA request (rev 2), waiting for the reply")
    t0 = time.monotonic()
    try:
        flags, rev, pd = iwarp_peer.read_reply(s, deadline)
    except iwarp_peer.Fail as e:
        secs = time.monotonic() - t0
        msg = str(e)
        if "reset" in msg or "closed" in msg:
            say("closed by the server (%s) after %.1f s" %
                ("reset" if "reset" in msg else "FIN", secs))
            return 0
        say("FAIL: %s" % msg)
        return 1
    ulp = pd[4:] if flags & iwarp_peer.F_ENHANCED else pd
    say("mpa reply after %.1f s: %s, pd '%s'" %
        (time.monotonic() - t0,
         "reject" if flags & iwarp_peer.F_REJECT else "accept",
         ulp.decode("ascii", "replace")))
    s.settimeout(args.hold)
    t1 = time.monotonic()
    try:
        while s.recv(4096):
            pass
        say("closed by the server after %.1f s" % (time.monotonic() - t1))
    except socket.timeout:
        say("still open after %.1f s" % args.hold)
    except OSError:
        say("reset by the server after %.1f s" % (time.monotonic() - t1))
    s.close()
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=("flood", "silent", "request"))
    ap.add_argument("--server", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--secs", type=float, default=20.0)
    ap.add_argument("--hold-ms", type=float, default=200.0)
    ap.add_argument("--max-open", type=int, default=200)
    ap.add_argument("--count", type=int, default=64)
    ap.add_argument("--until", default="/nonexistent")
    ap.add_argument("--max-secs", type=float, default=60.0)
    ap.add_argument("--wait", type=float, default=90.0)
    ap.add_argument("--hold", type=float, default=5.0)
    ap.add_argument("--after-ms", type=float, default=0.0)
    ap.add_argument("--mpa", action="store_true")
    ap.add_argument("--half-close", action="store_true")
    args = ap.parse_args()
    try:
        return {"flood": flood, "silent": silent, "request": request}[
            args.mode](args)
    except OSError as e:
        say("FAIL: %s" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
