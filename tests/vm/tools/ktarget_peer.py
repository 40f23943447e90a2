#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A hostile iWARP peer of a kernel ULP's fast-reg MR (stdlib only).

    ktarget_peer.py --server IP --port PORT --sync DIR --case CASE...

For tests/vm/264-hostile-kernel-mr.sh, against tests/kmod/siw_ktarget.ko.
One connection per --case, in order; connection N starts when the file
DIR/start.N exists, and its pause (below) ends when DIR/go.N exists. Each
connects (MPA revision 2, no CRC), takes the MR's STag, address and
length from the MPA reply's private data and waits for the target's Send
"READY" (the MR is registered). Then, per case:

  write-split   An RDMA Write of 8192 octets to the MR: the header and the
                first 4096 octets, then the pause (the target invalidates
                the MR meanwhile, or registers it again under a new key),
                then the rest. The rest must be refused: a Terminate DDP
                1/1/0x00 (invalid STag), connection closed.
  rresp-inval   With a small receive buffer (SO_RCVBUF 4096), an RDMA
                Read Request for the whole MR, then nothing read, so that
                the target's socket fills; once our receive queue stops
                growing, a Send with Invalidate of the MR's STag (the
                target then frees the pages and allocates others full of a
                secret), then the pause, then everything is read: the Read
                Response data must be the MR's original content; it may
                end early with a Terminate or a close, but no octet of it
                may be the secret or anything else that is not the MR's.

Every line about connection N starts with "[N] "; its last one is
"[N] RESULT PASS" or "[N] RESULT FAIL", after a "[N] FAIL: why"; the
client end of the TCP connection is in "[N] local IP:PORT". Exit 0 when
every connection passed, 1 otherwise.
"""

import argparse
import os
import socket
import struct
import sys
import termios
import fcntl
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iwarp_peer as ip  # noqa: E402

PD_MAGIC = 0x4B544754
OP_READ_REQ, OP_READ_RESP, OP_SEND_INV = 0x1, 0x2, 0x4
QN_READ_REQ = 1
ORIG_TAG = b"ORIG"
SECRET = b"SeCrEt:)"
PEERDATA = b"PEERDATA"
WRITE_LEN = 8192
SINK_STAG, SINK_TO = 0x51515100, 0x10000000

Fail = ip.Fail
PREFIX = ""


def say(msg):
    print(PREFIX + msg, flush=True)


# iwarp_peer's helpers print through its say(): with our prefix.
ip.say = say


def parse_ctrl(ulpdu):
    """(tagged, opcode) of a ULPDU."""
    return bool(ulpdu[0] & ip.DDP_T), ulpdu[1] & 0xF


def term_class(u):
    """'layer/etype/0xecode' of a Terminate ULPDU."""
    tctl = struct.unpack(">I", u[18:22])[0]
    return "%d/%d/0x%02x" % (tctl >> 28, (tctl >> 24) & 0xF,
                             (tctl >> 16) & 0xFF)


def orig_content(length):
    """The MR's original content: words "ORIG" + le32 word index."""
    words = length // 8
    idx = struct.pack("<%dI" % words, *range(words))
    b = bytearray(words * 8)
    for i in range(4):
        b[i::8] = ORIG_TAG[i:i + 1] * words
        b[4 + i::8] = idx[i::4]
    return bytes(b)


def wait_ready(s, deadline):
    """The target's Send "READY": the MR is registered."""
    while True:
        u = ip.read_fpdu(s, False, deadline, "the target's READY Send")
        tagged, op = parse_ctrl(u)
        if op == ip.OP_TERMINATE:
            raise Fail("Terminate %s instead of READY" % term_class(u))
        if not tagged and op in (ip.OP_SEND, 0x5) and \
                u[18:23] == b"READY":
            say("target: READY")
            return
        say("ignored: FPDU opcode %d (%d octets) before READY" %
            (op, len(u)))


def wait_file(path, deadline):
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise Fail("timed out waiting for %s" % path)
        time.sleep(0.2)


def inq(s):
    """Octets in our socket's receive queue."""
    buf = fcntl.ioctl(s.fileno(), termios.FIONREAD, b"\0\0\0\0")
    return struct.unpack("i", buf)[0]


def case_write_split(s, stag, addr, length, go, args, deadline):
    payload = PEERDATA * (WRITE_LEN // len(PEERDATA))
    frame = ip.fpdu(ip.tagged_hdr(ip.OP_WRITE, stag, addr) + payload, False)
    half = 2 + 14 + WRITE_LEN // 2
    s.sendall(frame[:half])
    say("sent: RDMA Write header (STag 0x%08x, TO 0x%x, %d octets) and "
        "the first %d payload octets" % (stag, addr, WRITE_LEN,
                                         WRITE_LEN // 2))
    wait_file(go, deadline)
    s.sendall(frame[half:])
    say("sent: the other %d payload octets, after the target took the MR "
        "back" % (WRITE_LEN - WRITE_LEN // 2))
    try:
        u = ip.read_fpdu(s, False, time.monotonic() + args.answer,
                         "a Terminate")
    except Fail as e:
        raise Fail("%s: the target took the rest of the Write into memory "
                   "it had taken back (expected a Terminate DDP 1/1/0x00)"
                   % e)
    ip.check_terminate(u, ip.DDP_T_STAG, frame)
    ip.expect_close(s, deadline)


def case_rresp_inval(s, stag, addr, length, go, args, deadline):
    orig = orig_content(length)
    rreq = ip.untagged_hdr(OP_READ_REQ, QN_READ_REQ, 1) + \
        struct.pack(">IQIIQ", SINK_STAG, SINK_TO, length, stag, addr)
    s.sendall(ip.fpdu(rreq, False))
    say("sent: RDMA Read Request for all %d octets of STag 0x%08x" %
        (length, stag))

    # Read nothing until the target's socket is full: our receive queue
    # stops growing.
    last, since = -1, time.monotonic()
    while True:
        n = inq(s)
        now = time.monotonic()
        if n != last:
            last, since = n, now
        elif n > 0 and now - since >= 1.0:
            break
        if now > deadline:
            raise Fail("our receive queue never settled (%d octets)" % n)
        time.sleep(0.1)
    say("our receive queue holds %d octets and stopped growing" % last)

    inv = ip.untagged_hdr(OP_SEND_INV, ip.QN_SEND, 1, inval=stag) + \
        b"INVALIDATE MR!!!"
    s.sendall(ip.fpdu(inv, False))
    say("sent: Send with Invalidate of STag 0x%08x" % stag)
    wait_file(go, deadline)

    got, nfpdu, n_orig, n_secret, n_other = 0, 0, 0, 0, 0
    first_secret = first_other = None
    ending = None
    while got < length:
        try:
            u = ip.read_fpdu(s, False, deadline, "Read Response data")
        except Fail as e:
            if "closed" in str(e) or "reset" in str(e):
                ending = "connection closed (%s)" % e
                break
            raise
        tagged, op = parse_ctrl(u)
        if op == ip.OP_TERMINATE:
            ending = "Terminate %s" % term_class(u)
            break
        if not tagged or op != OP_READ_RESP:
            raise Fail("unexpected FPDU: opcode %d, tagged %d" %
                       (op, tagged))
        rstag, rto = struct.unpack(">IQ", u[2:14])
        data = u[14:]
        off = rto - SINK_TO
        if rstag != SINK_STAG or off < 0 or off + len(data) > length:
            raise Fail("Read Response to STag 0x%08x TO 0x%x (%d octets) "
                       "is not for our sink" % (rstag, rto, len(data)))
        nfpdu += 1
        got += len(data)
        if data == orig[off:off + len(data)]:
            n_orig += len(data)
            continue
        # Word by word, at MR offsets that are multiples of 8 (the
        # patterns' words; an FPDU may start or end inside one).
        end = off + len(data)
        for a in range(off - off % 8, end, 8):
            lo, hi = max(a, off), min(a + 8, end)
            piece = data[lo - off:hi - off]
            if piece == orig[lo:hi]:
                n_orig += hi - lo
            elif piece == SECRET[lo - a:hi - a]:
                n_secret += hi - lo
                if first_secret is None:
                    first_secret = lo
            else:
                n_other += hi - lo
                if first_other is None:
                    first_other = (lo, piece)
    say("read response: %d of %d octets in %d FPDUs: %d the MR's, "
        "%d the secret, %d other" % (got, length, nfpdu, n_orig, n_secret,
                                     n_other))
    if ending:
        say("then: %s" % ending)
    if n_secret:
        raise Fail("%d octets of the Read Response are the secret that "
                   "the target put into pages it allocated after freeing "
                   "the MR's (the first at MR offset %d): siw sent "
                   "memory that was no longer the MR's" %
                   (n_secret, first_secret))
    if n_other:
        raise Fail("%d octets of the Read Response are neither the MR's "
                   "content nor the secret (the first at MR offset %d: "
                   "%s)" % (n_other, first_other[0],
                            first_other[1].hex()))
    if got < length and not ending:
        raise Fail("the Read Response stopped after %d octets" % got)


CASES = {
    "write-split": case_write_split,
    "rresp-inval": case_rresp_inval,
}
RCVBUF = {"rresp-inval": 4096}


def run(args, case, go):
    deadline = time.monotonic() + args.wait
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if case in RCVBUF:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF[case])
    s.settimeout(args.wait)
    s.connect((args.server, args.port))
    local = s.getsockname()
    say("local %s:%d" % (local[0], local[1]))

    s.sendall(ip.mpa_request(2))
    flags, rev, pd = ip.read_reply(s, deadline)
    if flags & ip.F_REJECT:
        raise Fail("the target rejected the connection")
    if flags & ip.F_CRC:
        raise Fail("the target turned the CRC on")
    if len(pd) < 4 + 24:
        raise Fail("private data of %d octets, want 4 + 24" % len(pd))
    magic, stag, addr, length, qpn = struct.unpack(">IIQII", pd[4:28])
    if magic != PD_MAGIC:
        raise Fail("private data magic %08x" % magic)
    say("target: QP %d, MR STag 0x%08x, %d octets at 0x%x" %
        (qpn, stag, length, addr))
    wait_ready(s, deadline)
    CASES[case](s, stag, addr, length, go, args, deadline)
    s.close()


def main():
    global PREFIX
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--case", required=True, action="append",
                    choices=sorted(CASES))
    ap.add_argument("--sync", required=True,
                    help="directory of the start.N and go.N files")
    ap.add_argument("--answer", type=float, default=5.0,
                    help="seconds to wait for an answer to the rest")
    ap.add_argument("--wait", type=float, default=120.0,
                    help="seconds one connection may take")
    ap.add_argument("--start-wait", type=float, default=600.0,
                    help="seconds to wait for a connection's start file")
    args = ap.parse_args()
    failed = 0
    for n, case in enumerate(args.case, 1):
        PREFIX = "[%d] " % n
        try:
            wait_file(os.path.join(args.sync, "start.%d" % n),
                      time.monotonic() + args.start_wait)
            say("case %s" % case)
            run(args, case, os.path.join(args.sync, "go.%d" % n))
        except (Fail, OSError) as e:
            say("FAIL: %s" % e)
            say("RESULT FAIL")
            failed += 1
            continue
        say("RESULT PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
