#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A misbehaving iWARP peer (stdlib only), for tests/vm/260-hostile-peer.sh.

    iwarp_peer.py --server IP --port PORT --case CASE [--rev 1|2] [--crc]

Connects to an iWARP server (an rdma_cm listener on siw), does the MPA
exchange (RFC 5044 section 7.1, RFC 6581) unless the case is about the
exchange itself, and then breaks the protocol in one way per case (see
CASES). It checks what the server does about it: the Terminate message
(RFC 5040 section 4.8 and 7) with the error class each case must give,
and that the server closes the TCP connection afterwards. Prints what it
sees, then PASS (exit 0) or FAIL: why (exit 1); 2 is a usage error.

The first line printed is "local IP:PORT", the client end of the TCP
connection, so the caller can find the server's log lines about it.

Wire formats as in drivers/infiniband/sw/siw/proto/wire.h: every field is
big endian, except the MPA CRC32C, which goes least significant octet
first.
"""

import argparse
import socket
import struct
import sys
import time

KEY_REQ = b"MPA ID Req Frame"
KEY_REP = b"MPA ID Rep Frame"
F_MARKERS, F_CRC, F_REJECT, F_ENHANCED = 0x80, 0x40, 0x20, 0x10

# DDP control octet (RFC 5041 section 4) and RDMAP control octet (RFC 5040
# section 4.2).
DDP_T, DDP_L = 0x80, 0x40
OP_WRITE, OP_SEND, OP_TERMINATE = 0x0, 0x3, 0x7
QN_SEND, QN_TERMINATE = 0, 2
TERM_M, TERM_D, TERM_R = 0x8000, 0x4000, 0x2000

# Terminate error classes (layer, etype, ecode) the cases expect.
RDMAP_OPCODE = (0, 2, 0x06)          # RDMAP, remote operation, unexpected opcode
DDP_T_VERSION = (1, 1, 0x04)         # DDP, tagged buffer, invalid DDP version
DDP_U_VERSION = (1, 2, 0x06)         # DDP, untagged buffer, invalid DDP version
DDP_T_STAG = (1, 1, 0x00)            # DDP, tagged buffer, invalid STag
DDP_U_MSN_RANGE = (1, 2, 0x03)       # DDP, untagged buffer, MSN out of range
LLP_ULPDU_LEN = (2, 0, 0x03)         # MPA, marker / ULPDU length mismatch
LLP_MARKER = LLP_ULPDU_LEN
LLP_CRC = (2, 0, 0x02)               # MPA, CRC error

BOGUS_STAG = 0x00BADC0D


class Fail(Exception):
    pass


def say(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------
# CRC32C (Castagnoli), reflected, as MPA uses it.

def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


# ---------------------------------------------------------------------------
# Building frames.

def mpa_request(rev, crc=False, markers=False, pd=b"", ird=1, ord_=1):
    """Rev 2 carries the IRD and ORD words (RFC 6581: the peer-to-peer
    and RTR flags in their top bits); IRD 1, ORD 1, no p2p by default."""
    flags = (F_CRC if crc else 0) | (F_MARKERS if markers else 0)
    if rev == 2:
        flags |= F_ENHANCED
        pd = struct.pack(">HH", ird, ord_) + pd
    return KEY_REQ + struct.pack(">BBH", flags, rev, len(pd)) + pd


def ctrl(opcode, tagged, last=True, dv=1, rv=1):
    ddp = (DDP_T if tagged else 0) | (DDP_L if last else 0) | (dv & 3)
    return struct.pack(">BB", ddp, ((rv & 3) << 6) | (opcode & 0xF))


def tagged_hdr(opcode, stag, to, **kw):
    return ctrl(opcode, True, **kw) + struct.pack(">IQ", stag, to)


def untagged_hdr(opcode, qn, msn, mo=0, inval=0, **kw):
    return ctrl(opcode, False, **kw) + struct.pack(">IIII", inval, qn, msn, mo)


def fpdu(ulpdu, crc_on, length=None, bad_crc=False):
    """Frame a ULPDU: length, ULPDU, pad to 4, CRC (0 without CRC)."""
    length = len(ulpdu) if length is None else length
    body = struct.pack(">H", length) + ulpdu
    body += b"\0" * (-len(body) % 4)
    crc = crc32c(body) if crc_on else 0
    if bad_crc:
        crc ^= 0x00010000
    return body + struct.pack("<I", crc)


# ---------------------------------------------------------------------------
# Reading.

def recv_exact(sock, n, deadline, what):
    buf = b""
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Fail("timed out waiting for %s (%d of %d octets)" %
                       (what, len(buf), n))
        sock.settimeout(left)
        try:
            chunk = sock.recv(n - len(buf))
        except socket.timeout:
            continue
        except ConnectionResetError:
            raise Fail("connection reset while waiting for %s" % what)
        if not chunk:
            raise Fail("connection closed while waiting for %s "
                       "(%d of %d octets)" % (what, len(buf), n))
        buf += chunk
    return buf


def read_reply(sock, deadline):
    hdr = recv_exact(sock, 20, deadline, "the MPA reply")
    key, flags, rev, pd_len = hdr[:16], hdr[16], hdr[17], \
        struct.unpack(">H", hdr[18:20])[0]
    if key != KEY_REP:
        raise Fail("MPA reply key is %r" % key)
    pd = recv_exact(sock, pd_len, deadline, "the MPA reply private data")
    say("mpa reply: rev=%d markers=%d crc=%d reject=%d enhanced=%d pd_len=%d" %
        (rev, bool(flags & F_MARKERS), bool(flags & F_CRC),
         bool(flags & F_REJECT), bool(flags & F_ENHANCED), pd_len))
    return flags, rev, pd


def read_fpdu(sock, crc_on, deadline, what):
    """One FPDU's ULPDU; checks pad and, with CRC on, the CRC."""
    lb = recv_exact(sock, 2, deadline, what)
    n = struct.unpack(">H", lb)[0]
    rest = recv_exact(sock, n + (-(n + 2) % 4) + 4, deadline, what)
    ulpdu, pad, trl = rest[:n], rest[n:-4], rest[-4:]
    if any(pad):
        raise Fail("FPDU pad octets are not zero: %s" % pad.hex())
    got = struct.unpack("<I", trl)[0]
    if crc_on and got != crc32c(lb + ulpdu + pad):
        raise Fail("FPDU from the server has a wrong CRC: %08x, want %08x" %
                   (got, crc32c(lb + ulpdu + pad)))
    return ulpdu


def expect_nothing(sock, secs, after="a valid FPDU"):
    """Nothing may arrive for secs seconds (the connection stays up)."""
    sock.settimeout(secs)
    try:
        data = sock.recv(4096)
    except socket.timeout:
        return
    except ConnectionResetError:
        raise Fail("connection reset after %s" % after)
    if not data:
        raise Fail("server closed the connection after %s" % after)
    raise Fail("server sent %d octets after %s: %s" %
               (len(data), after, data[:32].hex()))


def expect_close(sock, deadline, what="the server to close the connection"):
    """The server must close (FIN or RST) and send nothing more."""
    t0 = time.monotonic()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Fail("timed out waiting for %s" % what)
        sock.settimeout(left)
        try:
            data = sock.recv(4096)
        except socket.timeout:
            continue
        except ConnectionResetError:
            how = "reset"
            break
        if not data:
            how = "FIN"
            break
        raise Fail("unexpected %d octets while waiting for %s: %s" %
                   (len(data), what, data[:32].hex()))
    secs = time.monotonic() - t0
    say("closed by the server (%s) after %.1f s" % (how, secs))
    return secs


def check_terminate(ulpdu, want, sent):
    """ulpdu must be a Terminate with error class want about FPDU sent."""
    if len(ulpdu) < 22:
        raise Fail("FPDU of %d octets is no Terminate: %s" %
                   (len(ulpdu), ulpdu.hex()))
    ddp, rdmap = ulpdu[0], ulpdu[1]
    inval, qn, msn, mo = struct.unpack(">IIII", ulpdu[2:18])
    tctl = struct.unpack(">I", ulpdu[18:22])[0]
    layer, etype, ecode = tctl >> 28, (tctl >> 24) & 0xF, (tctl >> 16) & 0xFF
    hdrct = tctl & 0xE000
    opt = ulpdu[22:]
    flags = "".join(f for f, b in (("M", TERM_M), ("D", TERM_D),
                                   ("R", TERM_R)) if hdrct & b)
    say("terminate: layer=%d etype=%d ecode=0x%02x hdrct=%s opt=%d octets" %
        (layer, etype, ecode, flags or "-", len(opt)))
    if rdmap & 0xF != OP_TERMINATE:
        raise Fail("server sent RDMAP opcode %d, not a Terminate (7)" %
                   (rdmap & 0xF))
    if ddp != DDP_L | 1 or rdmap != (1 << 6) | OP_TERMINATE:
        raise Fail("Terminate control octets %02x %02x, want 41 47" %
                   (ddp, rdmap))
    if (inval, qn, msn, mo) != (0, QN_TERMINATE, 1, 0):
        raise Fail("Terminate DDP header RsvdULP %x QN %d MSN %d MO %d, "
                   "want 0 2 1 0" % (inval, qn, msn, mo))
    if tctl & 0x1FFF:
        raise Fail("Terminate reserved bits set: %08x" % tctl)
    if (layer, etype, ecode) != want:
        raise Fail("Terminate names layer %d etype %d ecode 0x%02x, "
                   "want %d %d 0x%02x" % ((layer, etype, ecode) + want))
    # Optional data: DDP segment length (M), the DDP header (D), the
    # RDMAP header (R) of the FPDU that failed: ours.
    pos, dlen = 0, 0
    if hdrct & TERM_M:
        if opt[0:2] != sent[0:2]:
            raise Fail("Terminate names segment length %s, ours was %s" %
                       (opt[0:2].hex(), sent[0:2].hex()))
        pos = 2
    if hdrct & TERM_D:
        dlen = 14 if opt[pos:pos + 1] and opt[pos] & DDP_T else 18
        if opt[pos:pos + dlen] != sent[2:2 + dlen]:
            raise Fail("Terminate echoes DDP header %s, ours was %s" %
                       (opt[pos:pos + dlen].hex(), sent[2:2 + dlen].hex()))
        pos += dlen
    if hdrct & TERM_R:
        if opt[pos:pos + 28] != sent[2 + dlen:2 + dlen + 28]:
            raise Fail("Terminate echoes an RDMAP header that is not ours")
        pos += 28
    if pos != len(opt):
        raise Fail("Terminate has %d octets of optional data, its flags "
                   "account for %d" % (len(opt), pos))


# ---------------------------------------------------------------------------
# Cases. Each gets a connected socket (MPA done unless it says otherwise).

def case_opcode(s, crc_on):
    """An untagged FPDU with RDMAP opcode 0xc (none defined)."""
    return fpdu(untagged_hdr(0xC, QN_SEND, 1) + b"x" * 8, crc_on), RDMAP_OPCODE


def case_ddp_version(s, crc_on):
    """A Send whose DDP version is 0."""
    return fpdu(untagged_hdr(OP_SEND, QN_SEND, 1, dv=0) + b"x" * 8,
                crc_on), DDP_U_VERSION


def case_ddp_version_tagged(s, crc_on):
    """An RDMA Write whose DDP version is 0."""
    return fpdu(tagged_hdr(OP_WRITE, BOGUS_STAG, 0x1000, dv=0) + b"x" * 8,
                crc_on), DDP_T_VERSION


def case_bogus_stag(s, crc_on):
    """An RDMA Write of 16 octets to an STag nobody registered."""
    return fpdu(tagged_hdr(OP_WRITE, BOGUS_STAG, 0x1000) + b"w" * 16,
                crc_on), DDP_T_STAG


def case_msn(s, crc_on):
    """An untagged Send with MSN 5 where 1 is due."""
    return fpdu(untagged_hdr(OP_SEND, QN_SEND, 5) + b"s" * 16,
                crc_on), DDP_U_MSN_RANGE


def case_short(s, crc_on):
    """ULPDU_Length 8: shorter than any DDP header (14)."""
    return fpdu(tagged_hdr(OP_WRITE, BOGUS_STAG, 0)[:8], crc_on), \
        LLP_ULPDU_LEN


def case_short_untagged(s, crc_on):
    """A Send with ULPDU_Length 16: a tagged header's worth, but a Send's
    untagged header needs 18."""
    return fpdu(untagged_hdr(OP_SEND, QN_SEND, 1)[:16], crc_on), \
        LLP_ULPDU_LEN


def case_crc(s, crc_on):
    """With CRC negotiated: a zero length RDMA Write (it touches no memory)
    with a correct CRC must pass; the same FPDU with a wrong CRC must not."""
    if not crc_on:
        raise Fail("CRC was not negotiated (run with --crc, server "
                   "mpa_crc=2)")
    good = fpdu(tagged_hdr(OP_WRITE, BOGUS_STAG, 0x1000), True)
    s.sendall(good)
    say("sent: zero length RDMA Write with a correct CRC")
    expect_nothing(s, 1.0)
    say("no answer to it within 1 s: accepted")
    return fpdu(tagged_hdr(OP_WRITE, BOGUS_STAG, 0x1000), True,
                bad_crc=True), LLP_CRC


def case_bad_marker(s, crc_on):
    """With markers asked for by the server (M in its reply): a Send whose
    marker (the one at stream offset 0, just before it) has FPDUPTR 4, not
    0 (RFC 5044 section 5)."""
    mark = struct.pack(">HH", 0, 4)
    body = fpdu(untagged_hdr(OP_SEND, QN_SEND, 1) + b"m" * 8, False)
    crc = crc32c(mark + body[:-4]) if crc_on else 0
    return mark + body[:-4] + struct.pack("<I", crc), LLP_MARKER


FPDU_CASES = {
    "opcode": case_opcode,
    "ddp-version": case_ddp_version,
    "ddp-version-tagged": case_ddp_version_tagged,
    "bogus-stag": case_bogus_stag,
    "msn": case_msn,
    "short": case_short,
    "short-untagged": case_short_untagged,
    "crc": case_crc,
    "bad-marker": case_bad_marker,
}

# The peer's own Terminate: its control word (layer, error type, code).
TERMINATE_CASES = {
    # RDMAP, remote operation, unspecified error.
    "peer-terminate": (0x02FF0000, "a Terminate of our own (RDMAP 0/2/0xff)"),
    # An MPA CRC error (layer 2, type 0, code 0x02) with the layer in the
    # low nibble and the type in the high one, as Linux's siw sends it
    # from a little-endian host: it reads as RDMAP 0/2/0x02, which is no
    # class the RFCs define.
    "peer-terminate-swapped":
        (0x02020000, "a Terminate for a CRC error, layer and type swapped"),
}

# Cases that break the connection setup or end it without a Terminate.
SETUP_CASES = ("garbage", "markers", "silent", "stall-request",
               "peer-terminate", "peer-terminate-swapped", "abort-header",
               "abort-payload", "no-fin")


def run_no_fin(s, crc_on, deadline, args):
    """A bad FPDU (unknown opcode): the server sends its Terminate and
    closes gracefully, a half close. This side never closes and keeps
    sending octets: the server must drop them and reset the connection
    only once its bound for the peer's FIN has passed (--close-min,
    --close-max: seconds after its FIN). A socket the server had let go
    of would reset at the first octets."""
    data, want = FPDU_CASES["opcode"](s, crc_on)
    s.sendall(data)
    check_terminate(read_fpdu(s, crc_on, deadline, "a Terminate"), want, data)
    while True:
        s.settimeout(max(deadline - time.monotonic(), 0.1))
        got = s.recv(4096)
        if not got:
            break
        raise Fail("unexpected %d octets after the Terminate" % len(got))
    t0 = time.monotonic()
    say("the server sent its FIN; sending 64 octets every 10 ms, no FIN")
    sent = 0
    while True:
        if time.monotonic() > deadline:
            raise Fail("still connected %.1f s after the server's FIN" %
                       (time.monotonic() - t0))
        try:
            s.sendall(bytes((sent * 7 + i) & 0xFF for i in range(64)))
        except (ConnectionResetError, BrokenPipeError):
            break
        sent += 1
        time.sleep(0.01)
    secs = time.monotonic() - t0
    say("reset by the server %.1f s after its FIN, %d sends of 64 octets "
        "in between" % (secs, sent))
    check_close_time(args, secs)


def run_fpdu_case(s, name, crc_on, deadline):
    data, want = FPDU_CASES[name](s, crc_on)
    say("sent: %s (%d octets: %s)" % (" ".join(FPDU_CASES[name].__doc__.split()),
                                        len(data), data[:24].hex()))
    s.sendall(data)
    ulpdu = read_fpdu(s, crc_on, deadline, "a Terminate")
    check_terminate(ulpdu, want, data)
    expect_close(s, deadline)


def run(args):
    deadline = time.monotonic() + args.wait
    fam = socket.AF_INET6 if ":" in args.server else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(args.wait)
    s.connect((args.server, args.port))
    local = s.getsockname()
    say("local %s:%d" % (local[0], local[1]))
    case = args.case

    if case == "garbage":
        junk = bytes((i * 37 + 11) & 0xFF for i in range(64))
        s.sendall(junk)
        say("sent: 64 octets that are no MPA request")
        expect_close(s, deadline)
        return
    if case == "silent":
        say("sending nothing")
        secs = expect_close(s, deadline)
        check_close_time(args, secs)
        return
    if case == "stall-request":
        s.sendall(mpa_request(args.rev)[:10])
        say("sent: the first 10 octets of an MPA request, then nothing")
        secs = expect_close(s, deadline)
        check_close_time(args, secs)
        return

    s.sendall(mpa_request(args.rev, crc=args.crc,
                          markers=(case == "markers")))
    flags, rev, pd = read_reply(s, deadline)
    if flags & F_REJECT:
        raise Fail("the server rejected the connection")
    if case == "markers":
        # A request for markers is taken (the server then sends them);
        # this side leaves.
        say("a request for markers was accepted; closing")
        s.close()
        return
    if bool(flags & F_MARKERS) != (case == "bad-marker"):
        raise Fail("the server %s markers" % ("does not ask for"
                                              if case == "bad-marker" else
                                              "asks for"))
    if rev != args.rev:
        raise Fail("reply revision %d, request was %d" % (rev, args.rev))
    if rev == 2 and (not flags & F_ENHANCED or len(pd) < 4):
        raise Fail("revision 2 reply without the IRD/ORD word")
    crc_on = bool(flags & F_CRC)
    if args.crc and not crc_on:
        raise Fail("the reply turns off the CRC the request asked for")
    if args.expect_crc is not None and crc_on != args.expect_crc:
        raise Fail("reply has C=%d, expected %d" % (crc_on, args.expect_crc))

    if case in FPDU_CASES:
        run_fpdu_case(s, case, crc_on, deadline)
    elif case == "no-fin":
        run_no_fin(s, crc_on, deadline, args)
    elif case in TERMINATE_CASES:
        ctrl, what = TERMINATE_CASES[case]
        s.sendall(fpdu(untagged_hdr(OP_TERMINATE, QN_TERMINATE, 1) +
                       struct.pack(">I", ctrl), crc_on))
        say("sent: " + what)
        expect_close(s, deadline)
    elif case == "abort-header":
        # The length and 10 of the 18 octets of a Send's DDP header, then
        # a TCP reset: the server's parser is in the middle of a header.
        s.sendall(fpdu(untagged_hdr(OP_SEND, QN_SEND, 1) + b"z" * 8,
                       crc_on)[:12])
        say("sent: the first 12 octets of a Send FPDU, now resetting")
    elif case == "abort-payload":
        # A Send of 16 octets (it fits the receive WR rping posts, 16
        # octets) cut after 8 payload octets, then a reset: the server
        # has begun placing it into the receive WR.
        s.sendall(fpdu(untagged_hdr(OP_SEND, QN_SEND, 1) + b"p" * 16,
                       crc_on)[:2 + 18 + 8])
        say("sent: header and 8 of 16 payload octets of a Send, "
            "now resetting")
    if case.startswith("abort-"):
        expect_nothing(s, 0.5, "a partial FPDU")
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))
    s.close()


def check_close_time(args, secs):
    if args.close_min is not None and secs < args.close_min:
        raise Fail("closed after %.1f s, expected no sooner than %.1f s" %
                   (secs, args.close_min))
    if args.close_max is not None and secs > args.close_max:
        raise Fail("closed after %.1f s, expected within %.1f s" %
                   (secs, args.close_max))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--case", required=True,
                    choices=sorted(FPDU_CASES) + list(SETUP_CASES))
    ap.add_argument("--rev", type=int, choices=(1, 2), default=2)
    ap.add_argument("--crc", action="store_true",
                    help="ask for CRC in the MPA request")
    ap.add_argument("--expect-crc", type=int, choices=(0, 1),
                    help="the reply's C bit must be this")
    ap.add_argument("--wait", type=float, default=15.0,
                    help="seconds the whole exchange may take")
    ap.add_argument("--close-min", type=float,
                    help="silent and no-fin cases: earliest acceptable "
                    "close (s)")
    ap.add_argument("--close-max", type=float,
                    help="silent and no-fin cases: latest acceptable "
                    "close (s)")
    args = ap.parse_args()
    try:
        run(args)
    except Fail as e:
        say("FAIL: %s" % e)
        return 1
    except OSError as e:
        say("FAIL: %s" % e)
        return 1
    say("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
