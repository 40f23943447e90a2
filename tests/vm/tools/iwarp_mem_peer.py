#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A hostile iWARP peer that goes for memory (stdlib only), for
tests/vm/262-hostile-peer-mem.sh.

    iwarp_mem_peer.py --server IP --port PORT --case CASE [--go FILE]
                      [--dereg-done FILE] [--answer-within S]

The rdma_cm cases connect to tests/progs/mem_victim, which names its
memory in the private data of its MPA reply (struct victim_pd there: magic
"SIWV", QP number, buffer length, the STag of its buffer in the QP's PD
(PD2) and of one in another PD (PD1), their addresses; big endian). The
PD2 buffer holds pattern A (octet i = 7 i + 1 mod 256). With --go the peer
waits for FILE (the victim's --ready) before its first FPDU.

  read-ok          Read Request of 4 KiB of the PD2 buffer: a Read
                   Response with pattern A (so the others are not vacuous)
  read-other-pd    Read Request naming the PD1 buffer: Terminate RDMAP
                   0/1/0x03 (STag not associated with this stream)
  read-no-access   Read Request of the PD2 buffer, the victim's QP without
                   remote read: Terminate RDMAP 0/1/0x02, no data
  write-no-access  RDMA Write of 64 octets of 0xee into the PD2 buffer, the
                   QP without remote write: Terminate RDMAP 0/1/0x02
  read-ird0        the victim accepted with IRD 0: the MPA reply must say
                   IRD 0; a Read Request: Terminate DDP 1/2/0x02, no data
  rtr-read-ird0    the victim accepted with IRD 0; the MPA request asks
                   for peer-to-peer mode with a zero length Read RTR only
                   (as an RNIC may): the reply must pick the Read RTR and
                   say IRD 0; the RTR (zero length Read Request) is
                   answered with a zero length Read Response, part of the
                   setup whatever the IRD; a Read Request after it gets
                   Terminate DDP 1/2/0x02, no data
  write-dereg      RDMA Write of 16 KiB of 0xee into the PD2 buffer: the
                   header and 8 KiB, then (--dereg-done FILE appears: the
                   victim deregistered the MR) the rest: Terminate DDP
                   1/1/0x00 (invalid STag)
  term-stuck       Terminate stuck behind a full socket: with a 4 KiB
                   receive buffer and ORD 8, the peer asks for the whole
                   PD2 buffer 8 times (the victim accepted with IRD 8) and
                   reads nothing, until what it holds stops growing: siw's
                   socket is full, a Read Response half sent. Then an RDMA
                   Write into the PD1 buffer, which siw must refuse: its
                   Terminate waits behind the Read Response. The victim
                   (--flush-within) moves its QP to ERROR; once it says so
                   (--flush-done FILE) the connection must be gone (reset)
                   within --answer-within seconds, before the peer reads
                   anything more
  qpc-short        at siw's QP-connect port (qp_port): an MPA request with
                   3 octets of private data: rejected, the reply's private
                   data exactly "SIWQ", version 1, status 5 (malformed),
                   reserved 0, QP numbers 0
  qpc-magic        the same with 16 octets and a wrong magic: the same reply
                   (the request's QP numbers are not echoed back)

  rtr-read-responder
                   the other way round: the peer listens on IP:PORT
                   (--server, --port) for one connection of siw's (the
                   test runs mem_victim reader against it) and answers the
                   MPA request with peer-to-peer mode and the zero length
                   Read RTR, IRD 1, ORD 1, and names 4 KiB of pattern A in
                   its private data (STag, TO, length). It holds its answer
                   to the RTR until the consumer's RDMA Read Request has
                   come too, then answers both, in order: the RTR's answer
                   must not complete the consumer's Read (the reader checks
                   the data), and no Terminate may come

A refused operation must be answered within --answer-within seconds
(default 3) and the connection closed after the Terminate. Prints what it
sees ("local IP:PORT" first), then PASS (exit 0) or FAIL: why (exit 1).
"""

import argparse
import fcntl
import os
import select
import socket
import struct
import sys
import termios
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iwarp_peer as wp                                    # noqa: E402
from iwarp_peer import Fail, say                           # noqa: E402

OP_READ_REQ, OP_READ_RESP = 0x1, 0x2
QN_READ_REQ = 1

RDMAP_ACCESS = (0, 1, 0x02)          # RDMAP, remote protection, access
RDMAP_STAG_OTHER_PD = (0, 1, 0x03)   # ... STag not associated with stream
DDP_U_NO_BUF = (1, 2, 0x02)          # DDP, untagged, no buffer (IRD)
DDP_T_STAG = (1, 1, 0x00)            # DDP, tagged, invalid STag
MPA_V2_P2P = 0x8000                  # IRD word: peer-to-peer (RFC 6581)
MPA_V2_RTR_READ = 0x4000             # ORD word: zero length Read RTR

VICTIM_PD = struct.Struct(">4sIIIIQQ")
PEER_OCTET = 0xEE
SINK_STAG, SINK_TO = 0x00C0FFEE, 0x10000
READ_OFF, READ_LEN = 4096, 4096
WRITE_LEN, WRITE_FIRST = 16384, 8192

STUCK_READS, STUCK_RCVBUF = 8, 4096
TCP_ESTABLISHED = 1

# The guest's slowness (tests/run --debug): fixed waits stretch with it.
SLOW = max(1, int(os.environ.get("SIW_TEST_SLOW") or 1))

QPC_MAGIC = b"SIWQ"
QPC_BAD_REQUEST = 5


def pattern_a(i):
    return (i * 7 + 1) & 0xFF


def wait_file(path, secs, what):
    end = time.monotonic() + secs
    while not os.path.exists(path):
        if time.monotonic() > end:
            raise Fail("%s (%s) did not appear within %.0f s" %
                       (what, path, secs))
        time.sleep(0.02)


class Victim:
    def __init__(self, ulp):
        if len(ulp) < VICTIM_PD.size:
            raise Fail("MPA reply carries %d octets of ULP private data, "
                       "the victim's take %d" % (len(ulp), VICTIM_PD.size))
        (magic, self.qpn, self.len, self.stag_pd2, self.stag_pd1,
         self.addr_pd2, self.addr_pd1) = VICTIM_PD.unpack_from(ulp)
        if magic != b"SIWV":
            raise Fail("MPA reply private data is not mem_victim's: %s" %
                       ulp[:16].hex())
        say("victim: QP %d, PD2 buffer STag 0x%08x at 0x%x, PD1 buffer "
            "STag 0x%08x at 0x%x, %d octets each" %
            (self.qpn, self.stag_pd2, self.addr_pd2, self.stag_pd1,
             self.addr_pd1, self.len))


def read_request(src_stag, src_to, size, msn=1, sink=(SINK_STAG, SINK_TO)):
    return wp.untagged_hdr(OP_READ_REQ, QN_READ_REQ, msn) + \
        struct.pack(">IQIIQ", sink[0], sink[1], size, src_stag, src_to)


def rtr_read_ird0(s, crc_on, ird, ord_, v, within):
    if not ird & MPA_V2_P2P or ord_ & 0xC000 != MPA_V2_RTR_READ:
        raise Fail("the MPA reply did not take peer-to-peer mode with the "
                   "Read RTR (IRD word %04x, ORD word %04x)" % (ird, ord_))
    if ird & 0x3FFF:
        raise Fail("the victim accepted with IRD 0, its MPA reply says "
                   "IRD %d" % (ird & 0x3FFF))
    rtr = wp.fpdu(read_request(0, 0, 0, msn=1, sink=(0, 0)), crc_on)
    send(s, rtr, "zero length Read Request, the RTR")
    ulpdu = wp.read_fpdu(s, crc_on, time.monotonic() + within,
                         "the answer to the Read RTR")
    op = opcode_of(ulpdu)
    if op == wp.OP_TERMINATE:
        raise Fail("the Read RTR was refused: a Terminate (%s)" %
                   ulpdu[18:22].hex())
    if op != OP_READ_RESP or len(ulpdu) != 14 or \
            ulpdu[0] & (wp.DDP_T | wp.DDP_L) != wp.DDP_T | wp.DDP_L:
        raise Fail("the answer to the Read RTR is no zero length Read "
                   "Response: %s" % ulpdu[:24].hex())
    say("rtr: answered with a zero length Read Response")
    req = wp.fpdu(read_request(v.stag_pd2, v.addr_pd2 + READ_OFF, READ_LEN,
                               msn=2), crc_on)
    send(s, req, "Read Request of %d octets of the PD2 buffer" % READ_LEN)
    expect_terminate(s, crc_on, DDP_U_NO_BUF, req, within, "Read Request")


def opcode_of(ulpdu):
    return ulpdu[1] & 0xF if len(ulpdu) >= 2 else None


def answer(s, crc_on, deadline, what):
    """The server's answer: ("resp", data) for a whole Read Response (its
    FPDUs checked for STag and offset), ("term", ULPDU) for a Terminate."""
    data = b""
    while True:
        ulpdu = wp.read_fpdu(s, crc_on, deadline, what)
        op = opcode_of(ulpdu)
        if op == wp.OP_TERMINATE:
            return "term", ulpdu
        if op != OP_READ_RESP:
            raise Fail("server sent an FPDU with RDMAP opcode %s: %s" %
                       (op, ulpdu[:24].hex()))
        if len(ulpdu) < 14 or not ulpdu[0] & wp.DDP_T:
            raise Fail("Read Response is not a tagged DDP segment: %s" %
                       ulpdu[:24].hex())
        stag, to = struct.unpack(">IQ", ulpdu[2:14])
        if stag != SINK_STAG or to != SINK_TO + len(data):
            raise Fail("Read Response to STag 0x%08x TO 0x%x, expected "
                       "0x%08x 0x%x" % (stag, to, SINK_STAG,
                                        SINK_TO + len(data)))
        data += ulpdu[14:]
        if ulpdu[0] & wp.DDP_L:
            return "resp", data


def expect_terminate(s, crc_on, want, sent, secs, what):
    """Within secs: a Terminate of class want about sent; then closed."""
    kind, got = answer(s, crc_on, time.monotonic() + secs,
                       "a Terminate refusing the %s" % what)
    if kind == "resp":
        raise Fail("the %s was answered: a Read Response with %d octets "
                   "instead of a Terminate" % (what, len(got)))
    wp.check_terminate(got, want, sent)
    wp.expect_close(s, time.monotonic() + 10 * SLOW)


def send(s, data, what):
    s.sendall(data)
    say("sent: %s (%d octets: %s)" % (what, len(data), data[:24].hex()))


RESP_STAG, RESP_LEN = 0x00FACE01, 4096
RREQ_BODY = struct.Struct(">IQIIQ")  # sink STag, TO, size, source STag, TO


def read_mpa_request(s, deadline):
    hdr = wp.recv_exact(s, 20, deadline, "the MPA request")
    flags, rev, pd_len = hdr[16], hdr[17], struct.unpack(">H", hdr[18:20])[0]
    if hdr[:16] != wp.KEY_REQ:
        raise Fail("MPA request key is %r" % hdr[:16])
    pd = wp.recv_exact(s, pd_len, deadline, "the MPA request private data")
    say("mpa request: rev=%d flags=%02x pd_len=%d" % (rev, flags, pd_len))
    return flags, rev, pd


def read_rreq(s, crc_on, deadline, what):
    """A Read Request's (msn, sink STag, sink TO, size, source STag)."""
    ulpdu = wp.read_fpdu(s, crc_on, deadline, what)
    if opcode_of(ulpdu) != OP_READ_REQ or len(ulpdu) != 18 + RREQ_BODY.size:
        raise Fail("%s: an FPDU that is no Read Request: %s" %
                   (what, ulpdu[:24].hex()))
    msn = struct.unpack(">I", ulpdu[10:14])[0]
    sink, sink_to, size, src, _ = RREQ_BODY.unpack(ulpdu[18:])
    say("read request: MSN %d, %d octets of STag 0x%08x into STag 0x%08x" %
        (msn, size, src, sink))
    return msn, sink, sink_to, size, src


def rtr_read_responder(args):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((args.server, args.port))
    ls.listen(1)
    ls.settimeout(args.wait)
    say("listening on %s:%d" % (args.server, args.port))
    s, peer = ls.accept()
    ls.close()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    say("local %s:%d, peer %s:%d" % (s.getsockname() + peer))
    deadline = time.monotonic() + args.wait
    flags, rev, pd = read_mpa_request(s, deadline)
    if rev != 2 or not flags & wp.F_ENHANCED or len(pd) < 4:
        raise Fail("no MPA revision 2 request with IRD/ORD")
    ird, ord_ = struct.unpack(">HH", pd[:4])
    if not ird & MPA_V2_P2P or not ord_ & MPA_V2_RTR_READ:
        raise Fail("the request does not offer peer-to-peer mode with a "
                   "Read RTR (IRD word %04x, ORD word %04x)" % (ird, ord_))
    crc_on = bool(flags & wp.F_CRC)
    rep_pd = struct.pack(">HH", MPA_V2_P2P | 1, MPA_V2_RTR_READ | 1) + \
        struct.pack(">IQI", RESP_STAG, 0, RESP_LEN)
    s.sendall(wp.KEY_REP + struct.pack(">BBH", wp.F_ENHANCED |
                                       (wp.F_CRC if crc_on else 0), 2,
                                       len(rep_pd)) + rep_pd)
    say("sent: MPA reply, peer-to-peer with the Read RTR")
    within = args.answer_within
    rtr = read_rreq(s, crc_on, time.monotonic() + within, "the Read RTR")
    if rtr[3]:
        raise Fail("the RTR Read Request asks for %d octets" % rtr[3])
    req = read_rreq(s, crc_on, time.monotonic() + args.wait,
                    "the consumer's RDMA Read Request")
    if req[3] != RESP_LEN or req[4] != RESP_STAG or req[0] != rtr[0] + 1:
        raise Fail("the consumer's Read asks for %d octets of STag 0x%08x "
                   "(MSN %d)" % (req[3], req[4], req[0]))
    send(s, wp.fpdu(wp.tagged_hdr(OP_READ_RESP, rtr[1], rtr[2]), crc_on),
         "zero length Read Response, the answer to the RTR")
    data = bytes(pattern_a(i) for i in range(RESP_LEN))
    send(s, wp.fpdu(wp.tagged_hdr(OP_READ_RESP, req[1], req[2]) + data,
                    crc_on), "Read Response, %d octets of pattern A" %
         RESP_LEN)
    # The consumer checks its data and disconnects; a Terminate fails.
    end = time.monotonic() + args.wait
    try:
        while True:
            ulpdu = wp.read_fpdu(s, crc_on, end, "the consumer's close")
            if opcode_of(ulpdu) == wp.OP_TERMINATE:
                raise Fail("siw terminated the connection: %s" %
                           ulpdu[:28].hex())
            say("then an FPDU with RDMAP opcode %s" % opcode_of(ulpdu))
    except Fail as e:
        if "closed" not in str(e) and "reset" not in str(e):
            raise
    say("closed by the consumer")


def inq(s):
    return struct.unpack("i", fcntl.ioctl(s, termios.FIONREAD,
                                          b"\0" * 4))[0]


def tcp_state(s):
    return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]


def term_stuck(s, crc_on, ird, v, args):
    if ird & 0x3FFF < STUCK_READS:
        raise Fail("the victim's MPA reply says IRD %d, the case needs %d"
                   % (ird & 0x3FFF, STUCK_READS))
    for i in range(STUCK_READS):
        send(s, wp.fpdu(read_request(v.stag_pd2, v.addr_pd2, v.len,
                                     msn=i + 1,
                                     sink=(SINK_STAG, SINK_TO + i * v.len)),
                        crc_on),
             "Read Request %d of the whole PD2 buffer (%d octets)" %
             (i + 1, v.len))
    # siw's socket is full once what we hold stops growing.
    end = time.monotonic() + args.wait
    last, since = -1, time.monotonic()
    while True:
        n = inq(s)
        if n != last:
            last, since = n, time.monotonic()
        elif n and time.monotonic() - since >= 1.0 * SLOW:
            break
        if time.monotonic() > end:
            raise Fail("no Read Response data came within %.0f s" %
                       args.wait)
        time.sleep(0.05)
    say("holding %d octets unread: siw's socket is full" % last)
    send(s, wp.fpdu(wp.tagged_hdr(wp.OP_WRITE, v.stag_pd1, v.addr_pd1) +
                    bytes([PEER_OCTET]) * 64, crc_on),
         "RDMA Write of 64 octets into the PD1 buffer (not the QP's PD)")
    wait_file(args.flush_done, args.wait,
              "the victim's word that it moved its QP to ERROR")
    end = time.monotonic() + args.answer_within
    while tcp_state(s) == TCP_ESTABLISHED:
        if time.monotonic() > end:
            raise Fail("the connection is still up %.0f s after the victim "
                       "moved its QP to ERROR (a Terminate stuck behind a "
                       "full socket keeps it)" % args.answer_within)
        time.sleep(0.05)
    say("connection ended (TCP state %d) after the victim's move to ERROR"
        % tcp_state(s))


def rdma_cm_case(s, args):
    if args.case == "rtr-read-ird0":
        # Peer-to-peer with only the zero length Read RTR offered.
        s.sendall(wp.mpa_request(2, ird=MPA_V2_P2P | 1,
                                 ord_=MPA_V2_RTR_READ | 1))
    elif args.case == "term-stuck":
        s.sendall(wp.mpa_request(2, ird=STUCK_READS, ord_=STUCK_READS))
    else:
        s.sendall(wp.mpa_request(2))
    deadline = time.monotonic() + args.wait
    flags, rev, pd = wp.read_reply(s, deadline)
    if flags & wp.F_REJECT:
        raise Fail("the victim rejected the connection")
    if rev != 2 or not flags & wp.F_ENHANCED or len(pd) < 4:
        raise Fail("no MPA revision 2 reply with IRD/ORD")
    ird, ord_ = struct.unpack(">HH", pd[:4])
    say("mpa reply: IRD %d ORD %d (flags %04x %04x)" %
        (ird & 0x3FFF, ord_ & 0x3FFF, ird & 0xC000, ord_ & 0xC000))
    crc_on = bool(flags & wp.F_CRC)
    v = Victim(pd[4:])
    if args.go:
        wait_file(args.go, args.wait, "the victim's ready file")
    within = args.answer_within
    case = args.case

    if case == "read-ok":
        req = wp.fpdu(read_request(v.stag_pd2, v.addr_pd2 + READ_OFF,
                                   READ_LEN), crc_on)
        send(s, req, "Read Request of %d octets of the PD2 buffer" %
             READ_LEN)
        kind, got = answer(s, crc_on, time.monotonic() + within,
                           "the Read Response")
        if kind == "term":
            raise Fail("the Read was refused: a Terminate (%s)" %
                       got[18:22].hex())
        want = bytes(pattern_a(READ_OFF + i) for i in range(READ_LEN))
        if got != want:
            raise Fail("Read Response holds %d octets that are not %d of "
                       "pattern A: %s..." % (len(got), READ_LEN,
                                             got[:16].hex()))
        say("read response: %d octets of pattern A" % len(got))
        s.close()
        return
    if case in ("read-other-pd", "read-no-access", "read-ird0"):
        if case == "read-ird0" and ird & 0x3FFF:
            raise Fail("the victim accepted with IRD 0, its MPA reply "
                       "says IRD %d" % (ird & 0x3FFF))
        other = case == "read-other-pd"
        req = wp.fpdu(read_request(v.stag_pd1 if other else v.stag_pd2,
                                   (v.addr_pd1 if other else v.addr_pd2) +
                                   READ_OFF, READ_LEN), crc_on)
        send(s, req, "Read Request of %d octets of the %s buffer" %
             (READ_LEN, "PD1" if other else "PD2"))
        want = {"read-other-pd": RDMAP_STAG_OTHER_PD,
                "read-no-access": RDMAP_ACCESS,
                "read-ird0": DDP_U_NO_BUF}[case]
        expect_terminate(s, crc_on, want, req, within, "Read Request")
        return
    if case == "rtr-read-ird0":
        rtr_read_ird0(s, crc_on, ird, ord_, v, within)
        return
    if case == "term-stuck":
        term_stuck(s, crc_on, ird, v, args)
        return
    if case == "write-no-access":
        w = wp.fpdu(wp.tagged_hdr(wp.OP_WRITE, v.stag_pd2, v.addr_pd2) +
                    bytes([PEER_OCTET]) * 64, crc_on)
        send(s, w, "RDMA Write of 64 octets into the PD2 buffer")
        expect_terminate(s, crc_on, RDMAP_ACCESS, w, within, "RDMA Write")
        return
    if case == "write-dereg":
        w = wp.fpdu(wp.tagged_hdr(wp.OP_WRITE, v.stag_pd2, v.addr_pd2) +
                    bytes([PEER_OCTET]) * WRITE_LEN, crc_on)
        cut = 2 + 14 + WRITE_FIRST
        send(s, w[:cut], "RDMA Write of %d octets into the PD2 buffer: "
             "header and the first %d" % (WRITE_LEN, WRITE_FIRST))
        wait_file(args.dereg_done, args.wait,
                  "the victim's word that it deregistered the MR")
        say("the victim deregistered the MR and rewrote its buffer")
        # The server may refuse the Write at deregistration already: then
        # its Terminate is here and the rest need not (cannot) go.
        if select.select([s], [], [], 0.3)[0]:
            say("the server sent something before the rest of the Write")
        else:
            try:
                s.sendall(w[cut:])
                say("sent: the rest, %d octets" % (len(w) - cut))
            except (BrokenPipeError, ConnectionResetError) as e:
                say("sending the rest failed (%s)" % e)
        expect_terminate(s, crc_on, DDP_T_STAG, w, within,
                         "rest of the RDMA Write")
        return
    raise Fail("unknown case %s" % case)


def qpc_case(s, args):
    if args.case == "qpc-short":
        ulp = b"abc"
    else:
        ulp = b"XIWQ" + bytes([1, 0, 0, 0]) + \
            struct.pack(">II", 0x11223344, 0x55667788)
    s.sendall(wp.mpa_request(2, pd=ulp))
    say("sent: MPA request, ULP private data %s" % ulp.hex())
    deadline = time.monotonic() + args.wait
    flags, rev, pd = wp.read_reply(s, deadline)
    ulp_rep = pd[4:] if flags & wp.F_ENHANCED else pd
    say("reply ULP private data: %s" % ulp_rep.hex())
    if not flags & wp.F_REJECT:
        raise Fail("the QP-connect listener accepted the request")
    want = QPC_MAGIC + bytes([1, QPC_BAD_REQUEST, 0, 0]) + bytes(8)
    if ulp_rep != want:
        raise Fail("reply private data %s, want %s (magic, version 1, "
                   "status %d, zeros)" % (ulp_rep.hex(), want.hex(),
                                          QPC_BAD_REQUEST))
    wp.expect_close(s, time.monotonic() + 10 * SLOW)


def run(args):
    if args.case == "rtr-read-responder":
        rtr_read_responder(args)
        return
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if args.case == "term-stuck":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, STUCK_RCVBUF)
    s.settimeout(args.wait)
    s.connect((args.server, args.port))
    local = s.getsockname()
    say("local %s:%d" % (local[0], local[1]))
    if args.case.startswith("qpc-"):
        qpc_case(s, args)
    else:
        rdma_cm_case(s, args)


CASES = ("read-ok", "read-other-pd", "read-no-access", "write-no-access",
         "read-ird0", "rtr-read-ird0", "write-dereg", "term-stuck",
         "qpc-short",
         "qpc-magic", "rtr-read-responder")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--case", required=True, choices=CASES)
    ap.add_argument("--go", help="wait for this file before the first FPDU")
    ap.add_argument("--dereg-done", help="write-dereg: the victim's file")
    ap.add_argument("--flush-done", help="term-stuck: the victim's file")
    ap.add_argument("--answer-within", type=float, default=3.0,
                    help="seconds an answer to an FPDU may take")
    ap.add_argument("--wait", type=float, default=15.0,
                    help="seconds the MPA exchange or a wait may take")
    args = ap.parse_args()
    if args.case == "write-dereg" and not args.dereg_done:
        ap.error("write-dereg needs --dereg-done")
    if args.case == "term-stuck" and not args.flush_done:
        ap.error("term-stuck needs --flush-done")
    try:
        run(args)
    except (Fail, OSError) as e:
        say("FAIL: %s" % e)
        return 1
    say("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
