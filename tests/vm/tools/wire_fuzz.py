#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Live-wire fuzzer of siw's sockets, CM and placement (stdlib only), for
tests/vm/269-wire-fuzz.sh.

    wire_fuzz.py --server IP --port PORT [--qpc-port PORT] --secs S
                 [--seed N] [--out DIR] [--replay FILE...]

Each case is one TCP connection to the server (tests/progs/fuzz_target,
an rdma_cm listener whose connections keep posting receives, Sends and
RDMA Reads) or to siw's QP-connect port (--qpc-port):

  mpa     an MPA request (rev 1 or 2, any flags, IRD/ORD, RTR bits,
          private data of any length), then mutated: bits flipped in its
          key, flags, revision and length, truncated, or followed by junk
  stream  a valid MPA request (CRC, peer-to-peer and the RTR type drawn),
          the reply read and the server's buffer (STag, address, length:
          fuzz_target's private data) taken from it, the RTR sent, then
          1 to 24 FPDUs from templates (Send, Send with Invalidate, RDMA
          Write into or around the buffer, Read Request of it, Read
          Response to the server's own Reads, Terminate, junk), each
          mutated with some chance: header fields, lengths, MSN/MO, STags,
          offsets, CRC, pad, cut short

Bytes go out in random chunks with random pauses, so FPDUs split at any
TCP boundary; the connection ends with a FIN, a reset, or not at all
for a while. What the server sends is read all along (its Read Requests
get answered, sometimes wrongly).

The kernel log (/dev/kmsg) is watched: at the first BUG, WARNING, Oops,
KASAN, UBSAN, KFENCE, lockdep, refcount or list report the fuzzer stops,
saves the last cases (the exact chunks sent, JSON) and the kernel lines
into DIR/found/, and exits 1. With --replay it sends saved cases, as they
were, instead of generating: the regression cases in tests/vm/fuzz-corpus.
Prints counts at the end; exit 0 when the kernel stayed quiet.
"""

import argparse
import base64
import json
import os
import random
import re
import select
import socket
import struct
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iwarp_peer as wp                                    # noqa: E402

BAD = re.compile(rb"BUG:|WARNING:|Oops|general protection|KASAN:|UBSAN:|"
                 rb"KFENCE:|ODEBUG:|refcount_t:|list_(add|del) corruption|"
                 rb"blocked for more than|soft lockup|rcu.*stall|"
                 rb"kernel BUG|leaked [0-9]+")
USER_TRAP = re.compile(rb"traps: \S+\[[0-9]+\] general protection")

OP_READ_REQ, OP_READ_RESP = 0x1, 0x2
OP_SEND_INV, OP_SEND_SE, OP_SEND_SE_INV = 0x4, 0x5, 0x6
QN_READ_REQ = 1
P2P, RTR_SEND = 0x8000, 0x4000          # IRD word (RFC 6581)
RTR_WRITE, RTR_READ = 0x8000, 0x4000    # ORD word
KEEP = 20                               # cases kept for a finding


class Kmsg:
    """New lines of the kernel log, without blocking."""

    def __init__(self):
        self.fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(self.fd, 0, os.SEEK_END)

    def bad_lines(self):
        out = []
        while True:
            try:
                rec = os.read(self.fd, 8192)
            except BlockingIOError:
                break
            except OSError:         # EPIPE: overwritten records, go on
                continue
            msg = rec.split(b";", 1)[-1]
            if BAD.search(msg) and not USER_TRAP.search(msg):
                out.append(msg.decode("utf-8", "replace").rstrip())
        return out


class Conn:
    """One TCP connection whose every sent chunk is recorded."""

    def __init__(self, rng, addr, record):
        self.rng, self.record = rng, record
        self.s = socket.create_connection(addr, timeout=3)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.s.setblocking(False)
        self.inbuf = b""
        self.closed = False

    def send(self, data, chunky=True):
        pos = 0
        while pos < len(data) and not self.closed:
            n = len(data) - pos
            if chunky:
                n = min(n, self.rng.choice((1, 2, 3, 7, 13, 64, 500, 1460,
                                            4096, 65536)))
            chunk = data[pos:pos + n]
            if not self._send_all(chunk):
                return
            self.record.append(base64.b64encode(chunk).decode())
            pos += n
            if chunky and self.rng.random() < 0.1:
                self.pump(self.rng.choice((0.001, 0.01, 0.03)))

    def _send_all(self, chunk):
        end = time.monotonic() + 2
        while chunk:
            try:
                n = self.s.send(chunk)
                chunk = chunk[n:]
            except BlockingIOError:
                if time.monotonic() > end:
                    return False    # the server stopped reading: fine
                self.pump(0.01)
            except OSError:
                self.closed = True
                return False
        return True

    def pump(self, secs):
        """Read what the server sends for up to secs."""
        end = time.monotonic() + secs
        while not self.closed:
            left = end - time.monotonic()
            if left <= 0:
                return
            r, _, _ = select.select([self.s], [], [], left)
            if not r:
                return
            try:
                data = self.s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                self.closed = True
                return
            if not data:
                self.closed = True
                return
            self.inbuf += data

    def fpdus(self, crc_on):
        """Whole ULPDUs the server sent (framing only; CRC not checked)."""
        out = []
        while len(self.inbuf) >= 2:
            n = struct.unpack(">H", self.inbuf[:2])[0]
            whole = 2 + n + (-(n + 2) % 4) + 4
            if len(self.inbuf) < whole:
                break
            out.append(self.inbuf[2:2 + n])
            self.inbuf = self.inbuf[whole:]
        return out

    def end(self):
        how = self.rng.random()
        try:
            if how < 0.4:
                wp_rst(self.s)
            elif how < 0.8:
                self.s.shutdown(socket.SHUT_WR)
                self.pump(0.2)
            else:
                self.pump(0.5)          # leave it hanging a while
        except OSError:
            pass
        self.s.close()


def wp_rst(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


# ---------------------------------------------------------------------------
# Generators.

def flip(rng, data, n=None, upto=None):
    b = bytearray(data)
    if not b:
        return bytes(b)
    span = min(len(b), upto or len(b))
    for _ in range(n or rng.randint(1, 4)):
        i = rng.randrange(span)
        b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def mpa_req_bytes(rng, crc, p2p, rtr_ord, rtr_send, ird, ord_, pd=b""):
    flags = wp.F_ENHANCED | (wp.F_CRC if crc else 0)
    words = struct.pack(">HH", ird | (P2P if p2p else 0) |
                        (RTR_SEND if rtr_send else 0), ord_ | rtr_ord)
    body = words + pd
    return wp.KEY_REQ + struct.pack(">BBH", flags, 2, len(body)) + body


def gen_mpa(rng):
    """A garbled MPA request."""
    rev = rng.choice((1, 2, 2, 3, 0))
    pd = rng.randbytes(rng.choice((0, 4, 8, 16, 100, 512, 513, 600)))
    flags = rng.randrange(256)
    frame = wp.KEY_REQ + struct.pack(">BBH", flags, rev, len(pd)) + pd
    what = rng.random()
    if what < 0.4:
        frame = flip(rng, frame, upto=24)
    elif what < 0.6:
        frame = frame[:rng.randrange(len(frame))]
    elif what < 0.8:
        bad_len = rng.choice((0, 1, 3, 0xFFFF, len(pd) + 1, len(pd) - 1))
        frame = frame[:18] + struct.pack(">H", bad_len & 0xFFFF) + frame[20:]
    else:
        frame += rng.randbytes(rng.randint(1, 200))
    return frame


class Stream:
    """FPDU templates against the server's buffer."""

    def __init__(self, rng, crc_on, stag, addr, length):
        self.rng, self.crc_on = rng, crc_on
        self.stag, self.addr, self.len = stag, addr, length
        self.msn = {0: 1, 1: 1}
        # Some streams stay valid long enough to reach deep state.
        self.rate = rng.choice((0.02, 0.1, 0.3, 0.6))

    def any_stag(self):
        r = self.rng.random()
        if r < 0.9:
            return self.stag
        if r < 0.95:
            return self.stag ^ (1 << self.rng.randrange(32))
        return self.rng.choice((0, 0xFFFFFFFF, self.rng.getrandbits(32)))

    def any_to(self, n):
        r = self.rng.random()
        if r < 0.85:
            return self.addr + self.rng.randrange(max(1, self.len - n + 1))
        if r < 0.95:
            return self.addr + self.len - self.rng.randrange(0, n + 2)
        return self.rng.choice((0, self.addr - 1, 2**64 - 1,
                                self.rng.getrandbits(64)))

    def payload(self, small=False):
        sizes = (0, 1, 4, 63, 256) if small and self.rng.random() < 0.9 \
            else (0, 1, 4, 63, 256, 1000, 4096, 16000)
        return self.rng.randbytes(self.rng.choice(sizes))

    def untagged(self, op, qn, data, inval=0):
        msn = self.msn.get(qn, 1)
        if qn in self.msn and self.rng.random() < 0.9:
            self.msn[qn] = msn + 1
        return wp.untagged_hdr(op, qn, msn, 0, inval) + data

    def template(self):
        r = self.rng.random()
        if r < 0.25:
            return self.untagged(wp.OP_SEND, 0, self.payload(True))
        if r < 0.32:
            return self.untagged(self.rng.choice((OP_SEND_INV, OP_SEND_SE,
                                                  OP_SEND_SE_INV)),
                                 0, self.payload(True), self.any_stag())
        if r < 0.6:
            data = self.payload()
            return wp.tagged_hdr(wp.OP_WRITE, self.any_stag(),
                                 self.any_to(len(data))) + data
        if r < 0.78:
            n = self.rng.choice((0, 1, 256, 4096, self.len, self.len + 1,
                                 2**31))
            return self.untagged(OP_READ_REQ, QN_READ_REQ,
                                 struct.pack(">IQIIQ", 0x1234,
                                             self.rng.getrandbits(64),
                                             n & 0xFFFFFFFF, self.any_stag(),
                                             self.any_to(min(n, self.len))))
        if r < 0.85:
            return wp.untagged_hdr(wp.OP_TERMINATE, 2, 1) + \
                struct.pack(">I", self.rng.getrandbits(32))
        if r < 0.92:
            return wp.untagged_hdr(self.rng.randrange(16),
                                   self.rng.randrange(4),
                                   self.rng.getrandbits(32)) + self.payload()
        return self.rng.randbytes(self.rng.randint(1, 64))

    def frame(self, ulpdu):
        """An FPDU of ulpdu, mutated with the stream's rate."""
        if self.rng.random() >= self.rate:
            return wp.fpdu(ulpdu, self.crc_on)
        r = self.rng.random()
        length, bad_crc = None, False
        if r < 0.5:
            ulpdu = flip(self.rng, ulpdu, upto=30)
        elif r < 0.65:
            length = self.rng.choice((0, 1, len(ulpdu) + 1, len(ulpdu) - 1,
                                      0xFFFF, len(ulpdu) + 4))
            length &= 0xFFFF
        elif r < 0.75:
            bad_crc = True
        data = wp.fpdu(ulpdu, self.crc_on, length, bad_crc)
        if 0.75 <= r < 0.9:
            data = data[:self.rng.randrange(1, len(data))]
        elif r >= 0.9:
            data = flip(self.rng, data, n=1, upto=len(data))
        return data

    def read_resp(self, rreq, good):
        """Answer a Read Request of the server's (sink STag, TO, size)."""
        sink, to, size = rreq
        data = self.rng.randbytes(min(size, 4096) if good else
                                  self.rng.choice((0, 1, size + 1, 9000)))
        if not good and self.rng.random() < 0.5:
            sink ^= 1 << self.rng.randrange(32)
        return wp.tagged_hdr(OP_READ_RESP, sink, to) + data


def rreqs_of(ulpdus):
    out = []
    for u in ulpdus:
        if len(u) >= 46 and u[1] & 0xF == OP_READ_REQ and not u[0] & wp.DDP_T:
            sink, to, size = struct.unpack(">IQI", u[18:34])
            out.append((sink, to, size))
    return out


def gen_stream(rng, conn, qpc):
    crc = rng.random() < 0.5
    p2p = rng.random() < 0.5
    rtr = rng.choice((RTR_WRITE, RTR_READ, RTR_WRITE | RTR_READ,
                      RTR_WRITE | RTR_READ, 0))
    rtr_send = rtr == 0 or rng.random() < 0.2
    ird = rng.choice((0, 1, 4, 4, 32, 64))
    ord_ = rng.choice((0, 1, 4, 4, 64))
    pd = b""
    if qpc:
        pd = b"SIWQ" + bytes([1, 0, 0, 0]) + rng.randbytes(8)
    conn.send(mpa_req_bytes(rng, crc, p2p, rtr, rtr_send, ird, ord_, pd),
              chunky=rng.random() < 0.5)
    end = time.monotonic() + 3
    while len(conn.inbuf) < 20 and not conn.closed and \
            time.monotonic() < end:
        conn.pump(0.1)
    if len(conn.inbuf) < 20:
        return "no reply"
    flags, rev, plen = conn.inbuf[16], conn.inbuf[17], \
        struct.unpack(">H", conn.inbuf[18:20])[0]
    while len(conn.inbuf) < 20 + plen and not conn.closed and \
            time.monotonic() < end:
        conn.pump(0.1)
    rep_pd = conn.inbuf[20:20 + plen]
    conn.inbuf = conn.inbuf[20 + plen:]
    if flags & wp.F_REJECT or conn.closed:
        return "rejected"
    crc_on = bool(flags & wp.F_CRC)
    stag, addr, length = rng.getrandbits(32), rng.getrandbits(64), 4096
    v2 = bool(flags & wp.F_ENHANCED)
    ulp = rep_pd[4:] if v2 else rep_pd
    if len(ulp) >= 24 and ulp[:4] == b"SIWF":
        stag, addr, length = struct.unpack(">IQI", ulp[4:24])
    st = Stream(rng, crc_on, stag, addr, length)
    if v2 and len(rep_pd) >= 4:
        ird_w, ord_w = struct.unpack(">HH", rep_pd[:4])
        if ird_w & P2P:
            if ord_w & RTR_WRITE:
                rtr_u = wp.tagged_hdr(wp.OP_WRITE, 0, 0)
            elif ord_w & RTR_READ:
                rtr_u = st.untagged(OP_READ_REQ, QN_READ_REQ,
                                    struct.pack(">IQIIQ", 0, 0, 0, 0, 0))
            else:
                rtr_u = st.untagged(wp.OP_SEND, 0, b"")
            conn.send(st.frame(rtr_u) if rng.random() < 0.2 else
                      wp.fpdu(rtr_u, crc_on))
    for _ in range(rng.randint(1, 24)):
        if conn.closed:
            break
        conn.pump(0)
        for rr in rreqs_of(conn.fpdus(crc_on)):
            if rng.random() < 0.7:
                conn.send(st.frame(st.read_resp(rr, rng.random() < 0.7)))
        conn.send(st.frame(st.template()))
    return "closed" if conn.closed else "sent"


# ---------------------------------------------------------------------------

def save(out, name, obj):
    os.makedirs(os.path.dirname(os.path.join(out, name)), exist_ok=True)
    with open(os.path.join(out, name), "w") as f:
        json.dump(obj, f)


def replay(args, kmsg):
    found = []
    for path in args.replay:
        with open(path) as f:
            case = json.load(f)
        port = args.qpc_port if case.get("qpc") else args.port
        try:
            c = Conn(random.Random(0), (args.server, port), [])
            for chunk in case["chunks"]:
                c.send(base64.b64decode(chunk), chunky=False)
                c.pump(0.005)
            c.pump(0.3)
            c.end()
        except OSError as e:
            print("replay %s: %s" % (os.path.basename(path), e))
        time.sleep(0.05)
        bad = kmsg.bad_lines()
        print("replayed %s: %s" % (os.path.basename(path),
                                   "kernel complained" if bad else "quiet"),
              flush=True)
        if bad:
            found.append((path, bad))
            break
    for path, bad in found:
        print("FAIL: the kernel complained at %s:" % path)
        for line in bad[:10]:
            print("   " + line)
    return 1 if found else 0


def fuzz(args, kmsg):
    seed = args.seed if args.seed is not None else random.getrandbits(32)
    print("seed %d" % seed, flush=True)
    master = random.Random(seed)
    last = []
    counts = {}
    t0 = time.monotonic()
    n = 0
    while time.monotonic() - t0 < args.secs:
        cseed = master.getrandbits(32)
        rng = random.Random(cseed)
        qpc = bool(args.qpc_port) and rng.random() < 0.15
        kind = "mpa" if rng.random() < 0.2 else "stream"
        case = {"seed": cseed, "kind": kind, "qpc": qpc, "chunks": []}
        port = args.qpc_port if qpc else args.port
        try:
            c = Conn(rng, (args.server, port), case["chunks"])
            if kind == "mpa":
                c.send(gen_mpa(rng))
                c.pump(0.2)
                result = "sent"
            else:
                result = gen_stream(rng, c, qpc)
            c.end()
        except OSError as e:
            result = "error: %s" % type(e).__name__
        key = "%s/%s" % (kind + ("@qpc" if qpc else ""), result)
        counts[key] = counts.get(key, 0) + 1
        n += 1
        last = (last + [case])[-KEEP:]
        bad = kmsg.bad_lines()
        if bad:
            for i, cs in enumerate(last):
                save(args.out, "found/case-%02d.json" % i, cs)
            with open(os.path.join(args.out, "found", "kernel.txt"),
                      "w") as f:
                f.write("\n".join(bad) + "\n")
            print("FAIL: the kernel complained after case %d (seed %d); "
                  "the last %d cases are in %s/found:" %
                  (n, cseed, len(last), args.out))
            for line in bad[:10]:
                print("   " + line)
            return 1
    secs = time.monotonic() - t0
    print("%d cases in %.0f s (%.1f/s), seed %d, kernel quiet" %
          (n, secs, n / secs, seed))
    for k in sorted(counts):
        print("   %-24s %d" % (k, counts[k]))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--qpc-port", type=int, default=0)
    ap.add_argument("--secs", type=float, default=60)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--out", default="/tmp/wire-fuzz")
    ap.add_argument("--replay", nargs="*")
    args = ap.parse_args()
    kmsg = Kmsg()
    if args.replay is not None:
        return replay(args, kmsg)
    return fuzz(args, kmsg)


if __name__ == "__main__":
    sys.exit(main())
