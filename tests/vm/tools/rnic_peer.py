#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""An iWARP peer in plain Python over TCP (stdlib only) that plays the
connection profile of a hardware RNIC, for tests that run it against siw.

    rnic_peer.py --profile P --role initiator --server IP --port PORT
                 --app rping-client --size N --count N [options]
    rnic_peer.py --profile P --role responder --listen IP --port PORT
                 --app rping-server --size N [--count N] [options]
    rnic_peer.py --selftest

It is written from the RFCs alone: MPA (RFC 5044, with the section 5
markers), DDP (RFC 5041), RDMAP (RFC 5040) and enhanced MPA with
peer-to-peer mode and RTR (RFC 6581). The application on top is rdma-core's
rping, so a real "rping -c -V -S size -C count" or "rping -s -V -S size" on
siw is the partner (rping refuses -S above 65535; its server needs an -S at
least as large as the client's).

  --role initiator    connect, send the MPA Request, read the Reply, send
                      the RTR if peer-to-peer mode was agreed
  --role responder    accept one connection, read the Request, send the
                      Reply; send nothing before the initiator's first
                      FPDU (the RTR in peer-to-peer mode, RFC 5044 7.1 and
                      RFC 6581); a Read RTR is answered with a zero length
                      Read Response
  --app rping-client  per ping: fill the source buffer with rping's text,
                      Send its {addr, STag, size}; serve the other side's
                      RDMA Read of it; on its 16 octet Send, Send the sink
                      buffer's {addr, STag, size}; on the next Send check
                      sink == source (rping -V)
  --app rping-server  per ping: on a 16 octet Send, RDMA Read the named
                      buffer (at most ORD Reads in flight, --read-chunk
                      splits it), check it is rping's text for this ping,
                      Send 16 octets; on the next Send RDMA Write the text
                      (strlen + 1 octets, as rping does) there, Send again

Profiles (what the hardware drivers do on the wire):

  cxgb4        MPA rev 2, answers a rev 1 request with rev 1; sets C and
               refuses a peer that will not use CRC; never markers;
               peer-to-peer with the zero length Read RTR; IRD/ORD 32;
               an MPA Reply with a higher revision than requested, or an
               RTR of another type than agreed, is a protocol violation;
               receives FPDUs of at most 16384 octets, sends FPDUs of at
               most one TCP segment (TCP_MAXSEG)
  cxgb4-write  cxgb4 with the zero length RDMA Write RTR
  irdma        MPA rev 2 (accepts 1), always sets C, refuses a rev 2 frame
               without the PEER_TO_PEER bit, private data up to 512
               octets; as initiator offers the Write and the Read RTR, as
               responder picks Read; never markers; IRD/ORD 64; FPDUs of
               at most one segment (the EMSS) both ways
  t4           MPA rev 1 (no IRD/ORD exchange, so ORD 1), CRC required, no
               RTR, never markers, receives at most 16384, sends one
               segment
  plain        rev 2, does not ask for CRC but uses it if asked, markers if
               asked (--markers asks for them), no peer-to-peer mode, no
               FPDU cap but the 16 bit MPA length; a reference

Wire facts: every field is big endian except the MPA CRC32C, which goes
least significant octet first. The MPA flags octet is M 0x80, C 0x40,
R 0x20 and (RFC 6581) the enhanced-negotiation bit 0x10; the rev 2 private
data starts with the IRD word (0x8000 peer-to-peer, 0x4000 zero length Send
RTR, 14 bits IRD) and the ORD word (0x8000 Write RTR, 0x4000 Read RTR, 14
bits ORD). CRC is on if either side sets C. M is per direction: the side
whose frame has M set receives markers. Markers sit every 512 octets of
each direction's stream counted from the first octet after that
direction's MPA frame (Request for initiator to responder, Reply for the
other way), so the first one precedes the first FPDU; FPDUPTR is the
distance from the FPDU's length field forward to the marker, 0 for a
marker just before an FPDU. Markers inside an FPDU (also one just before
its CRC) are covered by its CRC and count in its size. "FPDU size" here is
octets on the wire from the length field to the CRC, markers inside
included. A Read Request counts against this side's IRD from its arrival
until its Read Response is handed to TCP (answers go out after each batch
of received FPDUs), so a count above IRD is certainly the other side's
fault. Revision 1 exchanges no IRD/ORD: this side then keeps ORD 1.

--them NAME names the other side in the messages (e.g. "siw"). Options
starting with --x- are hidden and for the self-test only: they make this
side misbehave (oversized FPDUs, a bad CRC, no CRC, a wrong RTR, a higher
reply revision, Read Requests beyond ORD, corrupt data, a wrong STag or
MSN) or read the stream in small random pieces. --selftest runs known
answer checks of the CRC32C and the marker placement, then this peer
against itself over 127.0.0.1 for each profile, with and without markers,
in both arrangements, and the misbehaving cases, each of which must FAIL
for the right reason.

Prints "local IP:PORT" first, then the negotiated parameters, a line per
ping, the FPDU counts, then PASS (exit 0) or FAIL: why (exit 1); 2 is a
usage error.
"""

import argparse
import random
import select
import socket
import struct
import subprocess
import sys
import time

KEY_REQ = b"MPA ID Req Frame"
KEY_REP = b"MPA ID Rep Frame"
F_MARKERS, F_CRC, F_REJECT, F_ENHANCED = 0x80, 0x40, 0x20, 0x10
P2P, RTR_SEND = 0x8000, 0x4000              # IRD word (RFC 6581)
RTR_WRITE, RTR_READ = 0x8000, 0x4000        # ORD word
IRD_ORD_MASK = 0x3FFF
MAX_PD = 512

DDP_T, DDP_L = 0x80, 0x40
OP_WRITE, OP_READ_REQ, OP_READ_RESP, OP_SEND, OP_SEND_INV, OP_SEND_SE, \
    OP_SEND_SE_INV, OP_TERMINATE = range(8)
OP_NAMES = ("RDMA Write", "RDMA Read Request", "RDMA Read Response", "Send",
            "Send with Invalidate", "Send with SE",
            "Send with SE and Invalidate", "Terminate")
QN_SEND, QN_READ = 0, 1                    # Terminates go to queue 2
HDR_T, HDR_U = 14, 18
MARK = 512
LAYERS = {0: "RDMAP", 1: "DDP", 2: "MPA/LLP"}

RPING_INFO = struct.Struct(">QII")          # buf, rkey, size
RECV_LEN = 16                               # rping's receive buffer
RPING_MIN = 26                              # rping's RPING_MIN_BUFSIZE


class Fail(Exception):
    pass


def say(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------
# CRC32C (Castagnoli), reflected, as MPA uses it (RFC 5044 section 6, the
# iSCSI CRC of RFC 3720).

def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(data, crc=0):
    """CRC register value; crc32c(b, crc32c(a)) == crc32c(a + b)."""
    c = crc ^ 0xFFFFFFFF
    t = CRC_TABLE
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


# ---------------------------------------------------------------------------
# MPA framing and markers (RFC 5044 sections 4 and 5). Offsets are octets
# of one direction's stream after its MPA frame.

# A marker just before an FPDU (FPDUPTR 0): RFC 5044 can be read to leave
# it outside the FPDU (it precedes ULPDU_Length) or inside (its FPDUPTR
# points to the FPDU that it starts). Wireshark's dissector, the one
# third-party reading we can check, takes it as the FPDU's first octets:
# in its size and its CRC. So does this peer (and siw); False gives the
# other reading.
LEAD_MARKER_IN_CRC = True


def marker(ptr):
    return struct.pack(">HH", 0, ptr)


def frame_fpdu(ulpdu, off, markers, crc_on, bad_crc=False):
    """One FPDU at stream offset off: (wire octets, new offset, FPDU size)."""
    body = struct.pack(">H", len(ulpdu)) + ulpdu
    body += b"\0" * (-len(body) % 4)
    out = bytearray()
    if markers and off % MARK == 0:
        out += marker(0)                 # just before the FPDU: FPDUPTR 0
        off += 4
    start, fs, i = 0 if LEAD_MARKER_IN_CRC else len(out), off, 0
    while i < len(body):
        if markers and off % MARK == 0:
            out += marker(off - fs)
            off += 4
        n = len(body) - i
        if markers:
            n = min(n, MARK - off % MARK)
        out += body[i:i + n]
        i += n
        off += n
    if markers and off % MARK == 0:      # just before the CRC: inside
        out += marker(off - fs)
        off += 4
    crc = crc32c(out[start:]) if crc_on else 0
    if bad_crc:
        crc ^= 0x00800000
    out += struct.pack("<I", crc)
    return bytes(out), off + 4, len(out) - start


def marker_walk(start, length):
    """The raw span of length stream octets from start (no marker position)
    and the offsets of the markers inside it."""
    pos, left, marks = start, length, []
    while left:
        if pos % MARK == 0:
            marks.append(pos)
            pos += 4
            continue
        n = min(left, MARK - pos % MARK)
        pos += n
        left -= n
    return pos - start, marks


class Deframer:
    """Takes a direction's stream in any chunking, gives whole ULPDUs."""

    def __init__(self, markers, crc_on, cap, them):
        self.markers, self.crc_on, self.cap = markers, crc_on, cap
        self.them = them
        self.buf = bytearray()
        self.off = 0
        self.count = self.largest = 0
        self.lead = b""                  # the marker just before the FPDU

    def check_marker(self, m, pos, want):
        rsvd, ptr = struct.unpack(">HH", m)
        if rsvd or ptr != want:
            raise Fail("%s sent a bad MPA marker at stream offset %d: "
                       "reserved 0x%04x, FPDUPTR %d, want 0 and %d" %
                       (self.them, pos, rsvd, ptr, want))

    def next(self):
        buf = self.buf
        if self.markers and self.off % MARK == 0:
            if len(buf) < 4:
                return None
            self.check_marker(bytes(buf[:4]), self.off, 0)
            self.lead = bytes(buf[:4]) if LEAD_MARKER_IN_CRC else b""
            del buf[:4]
            self.off += 4
        if len(buf) < 2:
            return None
        n = struct.unpack(">H", buf[:2])[0]
        clean = 2 + n + (-(2 + n) % 4) + 4
        if self.cap and clean > self.cap:
            raise Fail("%s sent an FPDU of %d octets (ULPDU length %d); "
                       "this profile accepts at most %d" %
                       (self.them, clean, n, self.cap))
        if self.markers:
            raw, marks = marker_walk(self.off, clean)
        else:
            raw, marks = clean, []
        if len(buf) < raw:
            return None
        wire = bytes(buf[:raw])
        del buf[:raw]
        fs = self.off
        self.off += raw
        size = raw + len(self.lead)
        if self.cap and size > self.cap:
            raise Fail("%s sent an FPDU of %d octets with its markers; this "
                       "profile accepts at most %d" % (self.them, size,
                                                       self.cap))
        data = bytearray()
        last = 0
        for m in marks:
            self.check_marker(wire[m - fs:m - fs + 4], m, m - fs)
            data += wire[last:m - fs]
            last = m - fs + 4
        data += wire[last:]
        got = struct.unpack("<I", wire[-4:])[0]
        want = crc32c(wire[:-4], crc32c(self.lead))
        self.lead = b""
        if self.crc_on and got == 0 and want:
            raise Fail("%s sent an FPDU with the CRC field 0 (stream offset "
                       "%d): it does not use the CRC that was agreed" %
                       (self.them, fs))
        if self.crc_on and got != want:
            raise Fail("%s sent an FPDU with a bad CRC (stream offset %d, "
                       "ULPDU length %d): 0x%08x, want 0x%08x" %
                       (self.them, fs, n, got, want))
        if any(data[2 + n:-4]):
            raise Fail("%s sent an FPDU whose pad octets are not zero" %
                       self.them)
        self.count += 1
        self.largest = max(self.largest, size)
        return bytes(data[2:2 + n])


# ---------------------------------------------------------------------------
# DDP / RDMAP headers (RFC 5041 section 4, RFC 5040 section 4).

def ctrl(op, tagged, last=True):
    return bytes(((DDP_T if tagged else 0) | (DDP_L if last else 0) | 1,
                  0x40 | op))


def tagged(op, stag, to, data=b"", last=True):
    return ctrl(op, True, last) + struct.pack(">IQ", stag, to) + data


def untagged(op, qn, msn, mo=0, data=b"", last=True):
    return ctrl(op, False, last) + struct.pack(">IIII", 0, qn, msn, mo) + \
        data


def read_req(msn, sink_stag, sink_to, size, src_stag, src_to):
    return untagged(OP_READ_REQ, QN_READ, msn, 0, struct.pack(
        ">IQIIQ", sink_stag, sink_to, size, src_stag, src_to))


class Mem:
    """A "registered" buffer: STag, base address (the TO of octet 0)."""

    def __init__(self, stag, base, size, remote):
        self.stag, self.base, self.remote = stag, base, remote
        self.buf = bytearray(size)

    def span(self, to, n, them, what):
        off = to - self.base
        if off < 0 or off + n > len(self.buf):
            raise Fail("%s's %s names STag 0x%08x at TO 0x%x, %d octets: "
                       "outside the buffer registered at 0x%x, %d octets" %
                       (them, what, self.stag, to, n, self.base,
                        len(self.buf)))
        return off


class Read:
    def __init__(self, mem, off, size, src_stag, src_to, rtr=False):
        self.mem, self.off, self.size, self.rtr = mem, off, size, rtr
        self.src_stag, self.src_to, self.got = src_stag, src_to, 0


# ---------------------------------------------------------------------------
# Profiles. crc: "require" sets C and refuses a peer without CRC, "always"
# sets C, "optional" uses CRC if asked. rtr_offer: RTR types the initiator
# offers (empty: no peer-to-peer mode); rtr_pick: what the responder takes,
# by preference. rx_cap/tx_cap: octets, "mss", or None.

PROFILES = {
    "cxgb4": dict(rev=2, crc="require", markers=False, need_p2p=False,
                  rtr_offer=("read",), rtr_pick=("read",), ird=32, ord=32,
                  rx_cap=16384, tx_cap="mss"),
    "cxgb4-write": dict(rev=2, crc="require", markers=False, need_p2p=False,
                        rtr_offer=("write",), rtr_pick=("write",), ird=32,
                        ord=32, rx_cap=16384, tx_cap="mss"),
    "irdma": dict(rev=2, crc="always", markers=False, need_p2p=True,
                  rtr_offer=("write", "read"), rtr_pick=("read", "write"),
                  ird=64, ord=64, rx_cap="mss", tx_cap="mss"),
    "t4": dict(rev=1, crc="require", markers=False, need_p2p=False,
               rtr_offer=(), rtr_pick=(), ird=8, ord=8, rx_cap=16384,
               tx_cap="mss"),
    "plain": dict(rev=2, crc="optional", markers=True, need_p2p=False,
                  rtr_offer=(), rtr_pick=(), ird=16, ord=16, rx_cap=None,
                  tx_cap=None),
}


def rtr_names(types):
    return " and ".join("%s RTR" % t.capitalize() for t in types) or "none"


# ---------------------------------------------------------------------------
# The connection: MPA negotiation, then FPDUs both ways.

class Conn:
    def __init__(self, sock, args, prof):
        self.sock, self.args, self.prof = sock, args, dict(prof)
        prof = self.prof
        self.them = args.them
        self.deadline = time.monotonic() + args.wait
        self.rng = random.Random(args.port)
        self.hs = bytearray()            # octets read during the handshake
        self.mrs = {}
        self.reads, self.read_queue, self.rresp = [], [], []
        self.sends = []                  # completed Sends: payloads
        self.cur_send = None             # [buffer, octets placed]
        self.rx_send_msn = self.rx_read_msn = 1
        self.tx_send_msn = self.tx_read_msn = 1
        self.read_served = None          # coverage mask, set by the app
        self.eof = False
        self.await_rtr = None
        self.may_send = args.role == "initiator"
        self.tx_off = self.tx_count = self.tx_largest = 0
        self.p2p, self.rtr = False, None
        self.ird = args.ird if args.ird is not None else prof["ird"]
        self.ord = args.ord if args.ord is not None else prof["ord"]
        if args.rtr != "profile":
            prof["rtr_offer"] = {"none": (), "read": ("read",),
                                 "write": ("write",),
                                 "both": ("write", "read")}[args.rtr]
            prof["rtr_pick"] = prof["rtr_offer"] or prof["rtr_pick"]

    def mss(self):
        return self.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)

    def cap(self, v):
        return self.mss() if v == "mss" else v

    # -- handshake ----------------------------------------------------------

    def recv_hs(self, n, what):
        while len(self.hs) < n:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise Fail("timed out waiting for %s" % what)
            if not select.select([self.sock], [], [], left)[0]:
                continue
            data = self.recv()
            if not data:
                raise Fail("%s closed the connection while we waited for %s "
                           "(%d octets of it)" % (self.them, what,
                                                  len(self.hs)))
            self.hs += data
        out = bytes(self.hs[:n])
        del self.hs[:n]
        return out

    def recv(self):
        n = self.rng.randint(1, 700) if self.args.x_small_recv else 65536
        try:
            return self.sock.recv(n)
        except ConnectionResetError:
            return b""

    def read_frame(self, key, what):
        hdr = self.recv_hs(20, what)
        flags, rev, pd_len = hdr[16], hdr[17], \
            struct.unpack(">H", hdr[18:20])[0]
        if hdr[:16] != key:
            raise Fail("%s sent no %s: its first 16 octets are %r" %
                       (self.them, what, hdr[:16]))
        if pd_len > MAX_PD:
            raise Fail("%s's %s carries %d octets of private data; MPA "
                       "allows at most %d" % (self.them, what, pd_len, MAX_PD))
        pd = self.recv_hs(pd_len, what + " private data")
        say("%s: rev %d, flags M=%d C=%d R=%d H=%d, %d octets of private data"
            "%s" % (what, rev, bool(flags & F_MARKERS), bool(flags & F_CRC),
                    bool(flags & F_REJECT), bool(flags & F_ENHANCED), pd_len,
                    " (IRD word 0x%04x, ORD word 0x%04x)" %
                    struct.unpack(">HH", pd[:4])
                    if flags & F_ENHANCED and len(pd) >= 4 else ""))
        return flags, rev, pd

    def frame(self, key, flags, rev, pd):
        return key + struct.pack(">BBH", flags, rev, len(pd)) + pd

    def initiate(self):
        P, a = self.prof, self.args
        rev = P["rev"]
        want_crc = (P["crc"] != "optional" or a.crc) and not a.x_no_crc
        flags = (F_CRC if want_crc else 0) | (F_MARKERS if a.markers else 0)
        pd = b""
        offer = P["rtr_offer"]
        if rev == 2:
            flags |= F_ENHANCED
            ordw = self.ord | (RTR_WRITE if "write" in offer else 0) | \
                (RTR_READ if "read" in offer else 0)
            pd = struct.pack(">HH", self.ird | (P2P if offer else 0), ordw)
        self.sock.sendall(self.frame(KEY_REQ, flags, rev, pd))
        rflags, rrev, rpd = self.read_frame(KEY_REP, "MPA Reply")
        if rflags & F_REJECT:
            raise Fail("%s rejected the connection (MPA Reply with the "
                       "reject bit)" % self.them)
        if rrev > rev:
            raise Fail("%s answered with MPA revision %d to a revision %d "
                       "request; %s rejects a reply of a higher revision" %
                       (self.them, rrev, rev, a.profile))
        if rrev not in (1, 2):
            raise Fail("%s answered with MPA revision %d" % (self.them, rrev))
        crc = bool((flags | rflags) & F_CRC)
        if want_crc and not rflags & F_CRC:
            raise Fail("%s refuses CRC: its MPA Reply has C=0 though the "
                       "request set C; %s requires CRC" % (self.them,
                                                           a.profile))
        tx_mk, rx_mk = bool(rflags & F_MARKERS), bool(a.markers)
        if tx_mk and not P["markers"]:
            raise Fail("%s asks for markers (M=1 in its MPA Reply); %s never "
                       "sends markers" % (self.them, a.profile))
        self.p2p, their_ird = False, None
        if rrev == 2 and rflags & F_ENHANCED and len(rpd) >= 4:
            irdw, ordw = struct.unpack(">HH", rpd[:4])
            their_ird = irdw & IRD_ORD_MASK
            self.p2p = bool(irdw & P2P)
            picked = [t for t, b in (("write", ordw & RTR_WRITE),
                                     ("read", ordw & RTR_READ),
                                     ("send", irdw & RTR_SEND)) if b]
            if self.p2p and not offer:
                raise Fail("%s's MPA Reply sets peer-to-peer mode, which the "
                           "request did not ask for" % self.them)
            if self.p2p and (len(picked) != 1 or picked[0] not in offer):
                raise Fail("%s's MPA Reply picks %s, the request offered "
                           "only %s: a protocol violation" %
                           (self.them, rtr_names(picked), rtr_names(offer)))
            if self.p2p:
                self.rtr = picked[0]
        if rrev == 2 and P["need_p2p"] and not self.p2p:
            raise Fail("%s's revision 2 MPA Reply has no PEER_TO_PEER bit; "
                       "%s refuses it" % (self.them, a.profile))
        # Revision 1 exchanges no IRD: assume the other side can take 1.
        self.ord = min(self.ord, 1 if their_ird is None else their_ird)
        self.setup(crc, tx_mk, rx_mk, rrev, their_ird)
        if a.x_no_crc:
            self.rx.crc_on = self.tx_crc = False
        if self.p2p:
            self.send_rtr()

    def respond(self):
        P, a = self.prof, self.args
        flags, rev, pd = self.read_frame(KEY_REQ, "MPA Request")
        if rev < 1:
            self.reject(1, "%s's MPA Request has revision %d" % (self.them,
                                                                  rev))
        rrev = min(rev, P["rev"])
        if a.x_reply_rev:
            rrev = a.x_reply_rev
        crc = (P["crc"] != "optional" or a.crc or bool(flags & F_CRC)) and \
            not a.x_no_crc
        tx_mk, rx_mk = bool(flags & F_MARKERS), bool(a.markers)
        if tx_mk and not P["markers"]:
            self.reject(rrev, "%s asks for markers (M=1 in its MPA Request);"
                        " %s never sends markers" % (self.them, a.profile))
        enhanced = rev >= 2 and rrev >= 2 and flags & F_ENHANCED and \
            len(pd) >= 4
        if rev >= 2 and rrev >= 2 and P["need_p2p"] and not (
                enhanced and struct.unpack(">H", pd[:2])[0] & P2P):
            self.reject(rrev, "%s's revision 2 MPA Request has no "
                        "PEER_TO_PEER bit; %s refuses it" % (self.them,
                                                              a.profile))
        rpd, their_ird = b"", None
        if enhanced:
            irdw, ordw = struct.unpack(">HH", pd[:4])
            their_ird = irdw & IRD_ORD_MASK
            offered = [t for t, b in (("write", ordw & RTR_WRITE),
                                      ("read", ordw & RTR_READ),
                                      ("send", irdw & RTR_SEND)) if b]
            if irdw & P2P and P["rtr_pick"]:
                common = [t for t in P["rtr_pick"] if t in offered]
                if not common:
                    self.reject(rrev, "%s offers %s; %s does only %s" %
                                (self.them, rtr_names(offered), a.profile,
                                 rtr_names(P["rtr_pick"])))
                self.p2p, self.rtr = True, common[0]
            self.ord = min(self.ord, their_ird)
            ordw = self.ord | {None: 0, "write": RTR_WRITE,
                               "read": RTR_READ}[self.rtr]
            rpd = struct.pack(">HH", self.ird | (P2P if self.p2p else 0),
                              ordw)
        else:
            self.ord = min(self.ord, 1)
        rflags = (F_CRC if crc else 0) | (F_MARKERS if rx_mk else 0) | \
            (F_ENHANCED if rpd else 0)
        self.sock.sendall(self.frame(KEY_REP, rflags, rrev, rpd))
        self.setup(crc or bool(flags & F_CRC), tx_mk, rx_mk, rrev, their_ird)
        if a.x_no_crc:
            self.rx.crc_on = self.tx_crc = False
        self.await_rtr = self.rtr

    def reject(self, rev, why):
        self.sock.sendall(self.frame(KEY_REP, F_REJECT, rev, b""))
        say("sent: MPA Reply with the reject bit")
        raise Fail(why)

    def setup(self, crc, tx_mk, rx_mk, rev, their_ird):
        P, a = self.prof, self.args
        rx_cap = self.cap(P["rx_cap"])
        tx_cap = a.x_fpdu or self.cap(P["tx_cap"]) or 65540
        self.tx_crc, self.tx_mk = crc, tx_mk
        room = tx_cap
        if tx_mk:
            tx_cap = room = min(tx_cap, 65532)      # FPDUPTR is 16 bits
            room -= 4 * (room // MARK + 2)          # markers inside
        self.max_ulpdu = min((room - 4) // 4 * 4 - 2, 65534)
        if self.max_ulpdu < HDR_U + 8:
            raise Fail("an FPDU cap of %d octets leaves no room" % tx_cap)
        self.rx = Deframer(rx_mk, crc, rx_cap, self.them)
        self.rx.buf += self.hs
        say("negotiated: MPA rev %d, CRC %s, markers %s to us / %s from us, "
            "%s, IRD %d ORD %d (%s IRD %s), FPDU cap: receive %s, send %d" %
            (rev, "on" if crc else "off", "on" if rx_mk else "off",
             "on" if tx_mk else "off",
             "peer-to-peer with the %s" % rtr_names([self.rtr])
             if self.p2p else "client-server (no RTR)", self.ird, self.ord,
             self.them, "-" if their_ird is None else their_ird,
             rx_cap or "-", min(tx_cap, 65540)))

    def send_rtr(self):
        kind = self.args.x_rtr_type or self.rtr
        if kind == "write":
            self.xmit([tagged(OP_WRITE, 0, 0)])
        else:
            self.reads.append(Read(None, 0, 0, 0, 0, rtr=True))
            self.xmit([read_req(self.tx_read_msn, 0, 0, 0, 0, 0)])
            self.tx_read_msn += 1
        say("sent: the RTR, a zero length %s" % (
            "RDMA Write" if kind == "write" else "RDMA Read Request"))

    # -- sending ------------------------------------------------------------

    def xmit(self, ulpdus):
        out = bytearray()
        for u in ulpdus:
            self.tx_count += 1
            bad = self.tx_count == self.args.x_bad_crc
            wire, self.tx_off, size = frame_fpdu(u, self.tx_off, self.tx_mk,
                                                 self.tx_crc, bad)
            self.tx_largest = max(self.tx_largest, size)
            out += wire
        try:
            self.sock.sendall(out)
        except OSError as e:
            raise Fail("sending failed (%s): %s has gone away" % (e,
                                                                  self.them))

    def segments(self, hdr_len, data):
        room = self.max_ulpdu - hdr_len
        return [data[i:i + room] for i in range(0, len(data), room)] or [b""]

    def send_msg(self, data):
        self.wait_for(lambda: self.may_send,
                      "%s's first FPDU (only then may a responder send)" %
                      self.them)
        segs = self.segments(HDR_U, data)
        msn = self.tx_send_msn + (1 if self.args.x_msn_skip else 0)
        self.xmit([untagged(OP_SEND, QN_SEND, msn, i * len(segs[0]), s,
                            i == len(segs) - 1) for i, s in enumerate(segs)])
        self.tx_send_msn += 1

    def send_tagged(self, op, stag, to, data):
        segs = self.segments(HDR_T, data)
        ulpdus, off = [], 0
        for i, s in enumerate(segs):
            ulpdus.append(tagged(op, stag, to + off, s, i == len(segs) - 1))
            off += len(s)
        self.xmit(ulpdus)

    def issue_reads(self):
        out = []
        while self.read_queue and (
                self.args.x_ignore_ord or
                sum(not r.rtr for r in self.reads) < self.ord):
            r = self.read_queue.pop(0)
            out.append(read_req(self.tx_read_msn, r.mem.stag,
                                r.mem.base + r.off, r.size, r.src_stag,
                                r.src_to))
            self.tx_read_msn += 1
            self.reads.append(r)
        if out:
            self.xmit(out)

    # -- receiving ----------------------------------------------------------

    def wait_for(self, pred, what, eof_ok=False):
        while not pred():
            if self.eof and eof_ok:
                return False
            if self.eof:
                raise Fail("%s closed the connection while we waited for %s"
                           % (self.them, what))
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise Fail("timed out waiting for %s" % what)
            if select.select([self.sock], [], [], left)[0]:
                self.pump()
        return True

    def pump(self):
        data = self.recv()
        if not data:
            self.eof = True
            return
        self.rx.buf += data
        while True:
            u = self.rx.next()
            if u is None:
                break
            self.handle(u)
        if self.rresp:
            out, self.rresp = self.rresp, []
            for sink_stag, sink_to, data, _ in out:
                self.send_tagged(OP_READ_RESP, sink_stag, sink_to, data)
        self.issue_reads()

    def handle(self, u):
        if len(u) < 2:
            raise Fail("%s sent a ULPDU of %d octets, shorter than any DDP "
                       "header" % (self.them, len(u)))
        ddp, rd = u[0], u[1]
        op, t = rd & 0xF, bool(ddp & DDP_T)
        if ddp & 3 != 1:
            raise Fail("%s sent DDP version %d (must be 1)" % (self.them,
                                                               ddp & 3))
        if rd >> 6 != 1:
            raise Fail("%s sent RDMAP version %d (must be 1)" % (self.them,
                                                                 rd >> 6))
        if len(u) < (HDR_T if t else HDR_U):
            raise Fail("%s sent a %s FPDU of %d octets, shorter than its "
                       "header" % (self.them, "tagged" if t else "untagged",
                                   len(u)))
        name = OP_NAMES[op] if op < len(OP_NAMES) else "opcode %d" % op
        if t != (op in (OP_WRITE, OP_READ_RESP)):
            raise Fail("%s sent a %s as a %s DDP segment" %
                       (self.them, name, "tagged" if t else "untagged"))
        last = bool(ddp & DDP_L)
        if self.await_rtr:
            self.check_rtr(u, op)
            return
        self.may_send = True              # the initiator's first FPDU
        if t:
            stag, to = struct.unpack(">IQ", u[2:14])
            if op == OP_WRITE:
                self.got_write(stag, to, u[14:])
            else:
                self.got_read_resp(stag, to, u[14:], last)
            return
        rsvd, qn, msn, mo = struct.unpack(">IIII", u[2:18])
        data = u[18:]
        if op == OP_TERMINATE:
            self.got_terminate(data)
        if op not in (OP_SEND, OP_SEND_SE, OP_READ_REQ):
            raise Fail("%s sent an unexpected %s" % (self.them, name))
        want_qn = QN_READ if op == OP_READ_REQ else QN_SEND
        if qn != want_qn:
            raise Fail("%s sent a %s to DDP queue %d, not %d" %
                       (self.them, name, qn, want_qn))
        if op == OP_READ_REQ:
            self.got_read_req(msn, mo, data, last)
        else:
            self.got_send(msn, mo, data, last)

    def check_rtr(self, u, op):
        want = self.await_rtr
        ok = (want == "write" and op == OP_WRITE and len(u) == HDR_T) or \
            (want == "read" and op == OP_READ_REQ and len(u) == HDR_U + 28
             and struct.unpack(">I", u[HDR_U + 12:HDR_U + 16])[0] == 0)
        if not ok:
            raise Fail("%s's first FPDU (%s, %d octets of data) is not "
                       "the agreed RTR (a zero length %s): a protocol "
                       "violation" % (self.them, OP_NAMES[op] if op < 8
                                      else "opcode %d" % op,
                                      len(u) - (HDR_T if u[0] & DDP_T
                                                else HDR_U),
                          "RDMA Write" if want == "write" else
                          "RDMA Read Request"))
        if want == "read":
            msn = struct.unpack(">I", u[10:14])[0]
            if msn != self.rx_read_msn:
                raise Fail("%s's Read RTR has MSN %d, want %d" %
                           (self.them, msn, self.rx_read_msn))
            self.rx_read_msn += 1
            sink_stag, sink_to = struct.unpack(">IQ", u[HDR_U:HDR_U + 12])
            self.rresp.append((sink_stag, sink_to, b"", True))
        say("rtr: got the %s RTR" % want)
        self.await_rtr = None
        self.may_send = True

    def mr(self, stag, what):
        m = self.mrs.get(stag)
        if m is None or not m.remote:
            raise Fail("%s's %s names STag 0x%08x, which this side never "
                       "advertised" % (self.them, what, stag))
        return m

    def got_write(self, stag, to, data):
        if not data:
            return                        # zero length: touches no memory
        m = self.mr(stag, "RDMA Write")
        off = m.span(to, len(data), self.them, "RDMA Write")
        m.buf[off:off + len(data)] = data

    def got_read_resp(self, stag, to, data, last):
        if not self.reads:
            raise Fail("%s sent an RDMA Read Response with no Read Request "
                       "outstanding" % self.them)
        r = self.reads[0]
        if not r.size:
            if data or not last:
                raise Fail("%s answered a zero length Read Request with %d "
                           "octets, L=%d" % (self.them, len(data), last))
        elif data:
            if stag != r.mem.stag:
                raise Fail("%s's Read Response names STag 0x%08x; the oldest "
                           "outstanding Read Request named 0x%08x" %
                           (self.them, stag, r.mem.stag))
            off = r.mem.span(to, len(data), self.them, "Read Response")
            if off < r.off or off + len(data) > r.off + r.size:
                raise Fail("%s's Read Response places octets %d..%d, the "
                           "Read asked for %d..%d" %
                           (self.them, off, off + len(data), r.off,
                            r.off + r.size))
            r.mem.buf[off:off + len(data)] = data
            r.got += len(data)
        if last:
            if r.got != r.size:
                raise Fail("%s's Read Response ended after %d of %d octets" %
                           (self.them, r.got, r.size))
            self.reads.pop(0)
            if r.rtr:
                say("rtr: got the zero length Read Response")

    def got_read_req(self, msn, mo, data, last):
        if msn != self.rx_read_msn or mo or not last or len(data) != 28:
            raise Fail("%s sent a malformed RDMA Read Request: MSN %d (want "
                       "%d), MO %d, L=%d, %d octets (want 28)" %
                       (self.them, msn, self.rx_read_msn, mo, last,
                        len(data)))
        self.rx_read_msn += 1
        sink_stag, sink_to, size, src_stag, src_to = struct.unpack(
            ">IQIIQ", data)
        # Not yet answered (answers go out after each batch of FPDUs), so
        # outstanding at the other side too.
        busy = sum(not rtr for _, _, _, rtr in self.rresp) + 1
        if busy > self.ird:
            raise Fail("%s has %d RDMA Read Requests outstanding; this side's "
                       "IRD is %d" % (self.them, busy, self.ird))
        payload = b""
        if size:
            m = self.mr(src_stag, "RDMA Read Request")
            off = m.span(src_to, size, self.them, "RDMA Read Request")
            payload = bytes(m.buf[off:off + size])
            if self.read_served is not None and m is self.read_served[0]:
                self.read_served[1][off:off + size] = b"\1" * size
        self.rresp.append((sink_stag, sink_to, payload, False))

    def got_send(self, msn, mo, data, last):
        if msn != self.rx_send_msn:
            raise Fail("%s sent a Send with MSN %d; the next one is %d" %
                       (self.them, msn, self.rx_send_msn))
        if mo + len(data) > RECV_LEN:
            raise Fail("%s sent a Send reaching octet %d; rping's receive "
                       "buffer holds %d" % (self.them, mo + len(data),
                                            RECV_LEN))
        if self.cur_send is None:
            self.cur_send = [bytearray(RECV_LEN), 0]
        self.cur_send[0][mo:mo + len(data)] = data
        self.cur_send[1] += len(data)
        if last:
            if self.cur_send[1] != mo + len(data):
                raise Fail("%s's Send with MSN %d has %d octets, its last "
                           "segment ends at %d" % (self.them, msn,
                                                   self.cur_send[1],
                                                   mo + len(data)))
            self.sends.append(bytes(self.cur_send[0][:mo + len(data)]))
            self.cur_send = None
            self.rx_send_msn += 1

    def got_terminate(self, data):
        if len(data) < 4:
            raise Fail("%s sent a Terminate of %d octets" % (self.them,
                                                              len(data)))
        w = struct.unpack(">I", data[:4])[0]
        layer, etype, ecode = w >> 28, (w >> 24) & 0xF, (w >> 16) & 0xFF
        say("terminate: layer %d (%s) etype %d ecode 0x%02x, flags M=%d "
            "D=%d R=%d, %d octets of headers" %
            (layer, LAYERS.get(layer, "?"), etype, ecode, bool(w & 0x8000),
             bool(w & 0x4000), bool(w & 0x2000), len(data) - 4))
        raise Fail("%s sent a Terminate: layer %d (%s), error type %d, code "
                   "0x%02x" % (self.them, layer, LAYERS.get(layer, "?"),
                               etype, ecode))

    def next_send(self, what):
        self.wait_for(lambda: self.sends, what)
        return self.sends.pop(0)

    def stats(self):
        say("fpdus: sent %d (largest %d octets), received %d (largest %d "
            "octets)" % (self.tx_count, self.tx_largest, self.rx.count,
                         self.rx.largest))


# ---------------------------------------------------------------------------
# The rping application (rdma-core librdmacm/examples/rping.c): messages
# are Sends of struct rping_rdma_info {be64 buf; be32 rkey; be32 size}; the
# server's "go ahead" Sends are 16 octets too (rping leaves them zero).

STAG_SRC, BASE_SRC = 0x1A2B3C01, 0x7F3A5C000000
STAG_SINK, BASE_SINK = 0x1A2B3D02, 0x7F3A5D000000
STAG_RBUF, BASE_RBUF = 0x5E5E0103, 0x7F4B61000000


def rping_text(ping, size):
    """What rping -c puts in its source buffer for ping number ping: the
    text "rdma-ping-N: ", then letters from 'A' + N mod 58 counting up
    through 'z' and wrapping to 'A', and a NUL as the last octet."""
    head = (b"rdma-ping-%d: " % ping)[:size]
    n = size - len(head)
    cyc = bytes(range(65, 123))
    tail = (cyc[ping % 58:] + cyc * (n // 58 + 1))[:n]
    buf = bytearray(head + tail)
    buf[size - 1] = 0
    return buf


def first_diff(a, b):
    return next(i for i in range(min(len(a), len(b))) if a[i] != b[i])


def go_ahead(c, what):
    msg = c.next_send(what)
    if len(msg) != RECV_LEN:
        raise Fail("%s sent a Send of %d octets as %s; rping takes only %d "
                   "(\"Received bogus data\")" % (c.them, len(msg), what,
                                                  RECV_LEN))
    return msg


def app_client(c, a):
    """rping -c -V -S size -C count."""
    src = Mem(STAG_SRC, BASE_SRC, a.size, True)
    sink = Mem(STAG_SINK, BASE_SINK, a.size, True)
    c.mrs = {src.stag: src, sink.stag: sink}
    for ping in range(a.count):
        src.buf[:] = rping_text(ping, a.size)
        sink.buf[:] = b"\xa5" * a.size
        c.read_served = (src, bytearray(a.size))
        c.send_msg(RPING_INFO.pack(src.base, src.stag, a.size))
        go_ahead(c, "the go ahead after the RDMA Read of ping %d" % ping)
        left = c.read_served[1].count(0)
        if left:
            raise Fail("%s said go ahead after RDMA Reading only %d of the "
                       "%d octets of ping %d" % (c.them, a.size - left,
                                                 a.size, ping))
        c.send_msg(RPING_INFO.pack(sink.base, sink.stag, a.size))
        go_ahead(c, "the go ahead after the RDMA Write of ping %d" % ping)
        if sink.buf != src.buf:
            i = first_diff(sink.buf, src.buf)
            raise Fail("ping %d: %s's RDMA Write left the sink buffer "
                       "different from the source at octet %d (0x%02x, want "
                       "0x%02x)" % (ping, c.them, i, sink.buf[i], src.buf[i]))
        say("ping %d: %d octets read and written back by %s, data ok" %
            (ping, a.size, c.them))


def app_server(c, a):
    """rping -s -V -S size, one client; --count pings if given."""
    rbuf = Mem(STAG_RBUF, BASE_RBUF, a.size, False)   # local: Read sink
    c.mrs = {}
    ping = 0
    while not a.count or ping < a.count:
        if not c.wait_for(lambda: c.sends, "the client's first Send of ping "
                          "%d" % ping, eof_ok=not a.count):
            break
        info = go_ahead(c, "the source buffer of ping %d" % ping)
        addr, stag, ln = RPING_INFO.unpack(info)
        if not RPING_MIN <= ln <= a.size:
            raise Fail("%s names a source buffer of %d octets; this server "
                       "takes %d to %d (--size)" % (c.them, ln, RPING_MIN,
                                                    a.size))
        if c.ord == 0:
            raise Fail("ORD 0 was agreed: this side may not RDMA Read")
        chunk = a.read_chunk or ln
        for off in range(0, ln, chunk):
            c.read_queue.append(Read(rbuf, off, min(chunk, ln - off), stag,
                                     addr + off))
        c.issue_reads()
        c.wait_for(lambda: not c.read_queue and all(r.rtr for r in c.reads),
                   "the RDMA Read Responses of ping %d" % ping)
        want = rping_text(ping, ln)
        if rbuf.buf[:ln] != want:
            i = first_diff(rbuf.buf, want)
            raise Fail("ping %d: the data RDMA Read from %s is not rping's "
                       "text at octet %d (0x%02x, want 0x%02x)" %
                       (ping, c.them, i, rbuf.buf[i], want[i]))
        c.send_msg(bytes(RECV_LEN))
        info = go_ahead(c, "the sink buffer of ping %d" % ping)
        addr, stag, sink_len = RPING_INFO.unpack(info)
        n = bytes(rbuf.buf[:ln]).find(b"\0") + 1 or ln   # strlen + 1
        if n > sink_len:
            raise Fail("%s's sink buffer of %d octets is smaller than the %d "
                       "octets rping writes back" % (c.them, sink_len, n))
        data = bytearray(rbuf.buf[:n])
        if a.x_corrupt:
            data[n // 2] ^= 0xFF
        c.send_tagged(OP_WRITE, a.x_bad_stag or stag, addr, bytes(data))
        c.send_msg(bytes(RECV_LEN))
        say("ping %d: read %d octets from %s, wrote %d back" % (ping, ln,
                                                               c.them, n))
        ping += 1
    if a.count and c.wait_for(lambda: c.sends, "%s to close after %d pings"
                              % (c.them, a.count), eof_ok=True):
        raise Fail("%s sent more than the %d pings of --count" % (c.them,
                                                                  a.count))
    if not ping:
        raise Fail("%s closed without a single ping" % c.them)


APPS = {"rping-client": app_client, "rping-server": app_server}


# ---------------------------------------------------------------------------
# Running one side.

def connect(a):
    fam = socket.AF_INET6 if ":" in (a.server or a.listen) else \
        socket.AF_INET
    end = time.monotonic() + a.wait
    if a.role == "responder":
        ls = socket.socket(fam, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if a.mss:
            ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, a.mss)
        ls.bind((a.listen, a.port))
        ls.listen(1)
        ls.settimeout(a.wait)
        try:
            s, _ = ls.accept()
        except socket.timeout:
            raise Fail("nobody connected to %s:%d within %.0f s" %
                       (a.listen, a.port, a.wait))
        ls.close()
        return s
    while True:
        s = socket.socket(fam, socket.SOCK_STREAM)
        if a.mss:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, a.mss)
        s.settimeout(max(0.1, end - time.monotonic()))
        try:
            s.connect((a.server, a.port))
            return s
        except (ConnectionRefusedError, socket.timeout) as e:
            s.close()
            if time.monotonic() > end:
                raise Fail("could not connect to %s:%d: %s" %
                           (a.server, a.port, e))
            time.sleep(0.1)


def run(a):
    s = connect(a)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    say("local %s:%d" % s.getsockname()[:2])
    say("peer %s:%d, profile %s, %s, %s" % (s.getpeername()[:2] + (
        a.profile, a.role, a.app)))
    c = Conn(s, a, PROFILES[a.profile])
    try:
        if a.role == "initiator":
            c.initiate()
        else:
            c.respond()
            if not c.p2p and a.app == "rping-client":
                raise Fail("without peer-to-peer mode a responder may send "
                           "only after the initiator's first FPDU (RFC 5044),"
                           " so the rping client cannot be the responder")
        APPS[a.app](c, a)
        if any(r.rtr for r in c.reads):
            raise Fail("%s never answered the Read RTR" % c.them)
    finally:
        if hasattr(c, "rx"):
            c.stats()
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


# ---------------------------------------------------------------------------
# Self-test: known answers, then this peer against itself over 127.0.0.1.

def kat_crc():
    for data, want in ((bytes(32), 0x8A9136AA), (b"\xff" * 32, 0x62A8AB43),
                       (bytes(range(32)), 0x46DD794E),
                       (bytes(range(31, -1, -1)), 0x113FDB5C),
                       (b"123456789", 0xE3069283)):
        if crc32c(data) != want:
            raise Fail("crc32c(%s...) = 0x%08x, want 0x%08x" %
                       (data[:4].hex(), crc32c(data), want))
    wire = frame_fpdu(bytes(30), 0, False, True)[0]
    if wire[-4:] != struct.pack(">I", crc32c(wire[:-4]))[::-1]:
        raise Fail("the CRC is not sent least significant octet first")
    return "RFC 3720 vectors, MPA octet order"


def kat_markers():
    # Offsets worked out by hand from RFC 5044 section 5: a marker every
    # 512 octets of the stream, the first at offset 0.
    w1, off, n1 = frame_fpdu(bytes(1000), 0, True, True)
    w2, off, n2 = frame_fpdu(bytes(6), off, True, True)
    w3, off, n3 = frame_fpdu(bytes(498), off, True, True)
    w4, off, n4 = frame_fpdu(bytes(10), off, True, True)
    stream = w1 + w2 + w3 + w4
    checks = [
        (w1[0:4], marker(0), "marker before the first FPDU"),
        (w1[4:6], b"\x03\xe8", "first length field at 4"),
        (w1[512:516], marker(508), "marker at 512 inside FPDU 1"),
        (len(w1), 1016, "FPDU 1 ends at 1016"),
        (n1, 1016 if LEAD_MARKER_IN_CRC else 1012, "FPDU 1 size"),
        (w2[8:12], marker(8), "marker at 1024 just before FPDU 2's CRC"),
        (len(w2), 16, "FPDU 2 spans 1016..1032"),
        (len(w3), 504, "FPDU 3 ends exactly at 1536, no marker"),
        (w4[0:4], marker(0), "marker at 1536 before FPDU 4"),
        (off, 1556, "stream offset after FPDU 4"),
        (w1[1012:], struct.pack("<I", crc32c(w1[0 if LEAD_MARKER_IN_CRC
                                                else 4:1012])),
         "CRC covers the marker inside"),
    ]
    for got, want, what in checks:
        if got != want:
            raise Fail("marker placement: %s: got %r, want %r" % (what, got,
                                                                  want))
    d = Deframer(True, True, None, "the stream")
    got = []
    for i in range(len(stream)):               # one octet at a time
        d.buf += stream[i:i + 1]
        u = d.next()
        if u is not None:
            got.append(len(u))
    if got != [1000, 6, 498, 10]:
        raise Fail("deframing the marked stream gave ULPDUs of %s" % got)
    bad = bytearray(stream)
    bad[515] ^= 4                              # FPDUPTR 508 -> 504
    d = Deframer(True, True, None, "the stream")
    d.buf += bad
    try:
        d.next()
    except Fail as e:
        if "FPDUPTR 504, want 0 and 508" not in str(e):
            raise
        return "offsets 0, 512, 1024, 1536; FPDUPTR 0/508/8/0; 1 octet chunks"
    raise Fail("a wrong FPDUPTR went unnoticed")


def run_pair(resp, init, count=3, size=100000):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    base = [sys.executable, __file__, "--port", str(port), "--wait", "30",
            "--size", str(size), "--count", str(count), "--mss", "1448"]
    pr = subprocess.Popen(base + ["--role", "responder", "--listen",
                                  "127.0.0.1"] + resp, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    pi = subprocess.Popen(base + ["--role", "initiator", "--server",
                                  "127.0.0.1"] + init, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    out_i = pi.communicate(timeout=120)[0]
    out_r = pr.communicate(timeout=120)[0]
    return {"responder": (pr.returncode, out_r),
            "initiator": (pi.returncode, out_i)}


def last_line(out):
    lines = out.strip().splitlines()
    return lines[-1] if lines else "(no output)"


def positive(resp, init, client):
    res = run_pair(resp, init)
    for side, (rc, out) in res.items():
        if rc != 0 or last_line(out) != "PASS":
            raise Fail("%s: %s" % (side, last_line(out)))
    out = res["initiator" if client == "initiator" else "responder"][1]
    pings = sum(line.startswith("ping ") for line in out.splitlines())
    neg = [line for line in res["initiator"][1].splitlines()
           if line.startswith("negotiated:")]
    fp = [line for line in out.splitlines() if line.startswith("fpdus:")]
    if pings != 3:
        raise Fail("the client did %d pings, not 3" % pings)
    return "%s; %s" % (neg[0][12:] if neg else "?", fp[0] if fp else "")


def negative(resp, init, side, want):
    res = run_pair(resp, init, count=2, size=40000)
    rc, out = res[side]
    line = last_line(out)
    if rc != 1 or want not in line:
        raise Fail("%s should FAIL with \"%s\"; it ended (exit %d) with: %s"
                   % (side, want, rc, line))
    return "%s %s" % (side, line)


def p2p(name, extra):
    return "--rtr" in extra or bool(PROFILES[name]["rtr_offer"])


def selftest():
    cases = [("crc32c known answers", kat_crc),
             ("marker placement known answers", kat_markers)]
    arr = []                # responder, initiator, their extra options
    mk, rtr = ["--markers"], ["--rtr", "read"]
    for name in PROFILES:
        arr.append((name, name, [], []))
    arr += [("plain", "plain", mk, mk), ("plain", "plain", mk + ["--crc"], mk),
            ("plain", "plain", [], mk), ("plain", "plain", mk + rtr, mk + rtr),
            ("cxgb4", "irdma", [], []), ("irdma", "cxgb4-write", [], []),
            ("cxgb4", "t4", [], []), ("t4", "cxgb4", [], [])]
    for i, (rname, iname, rx, ix) in enumerate(arr):
        small = ["--x-small-recv"] if i % 2 else []
        chunk = ["--read-chunk", "16384"] if i % 3 == 0 else []
        for client in ("initiator", "responder"):
            label = "%s%s responder / %s%s initiator, client is the %s" % (
                rname, "".join(" " + x for x in rx), iname,
                "".join(" " + x for x in ix), client)
            if client == "responder" and not (p2p(rname, rx) and
                                              p2p(iname, ix)):
                cases.append((label, None))
                continue
            apps = (["--app", "rping-server"], ["--app", "rping-client"])
            if client == "responder":
                apps = apps[::-1]
            resp = ["--profile", rname] + rx + apps[0] + small + chunk
            init = ["--profile", iname] + ix + apps[1] + small + chunk
            cases.append((label, lambda r=resp, n=init, c=client:
                          positive(r, n, c)))
    srv, cli = ["--app", "rping-server"], ["--app", "rping-client"]
    cx = ["--profile", "cxgb4"]
    negs = [
        ("oversized FPDU against cxgb4's receive cap", cx + srv,
         cx + cli + ["--x-fpdu", "20000"], "responder",
         "sent an FPDU of 20000 octets (ULPDU length 19994); this profile "
         "accepts at most 16384"),
        ("bad CRC", cx + srv, cx + cli + ["--x-bad-crc", "3"], "responder",
         "sent an FPDU with a bad CRC"),
        ("bad CRC with markers", ["--profile", "plain", "--markers"] + srv,
         ["--profile", "plain", "--crc", "--markers", "--x-bad-crc", "4"] +
         cli, "responder", "sent an FPDU with a bad CRC"),
        ("no PEER_TO_PEER bit against irdma", ["--profile", "irdma"] + srv,
         ["--profile", "plain"] + cli, "responder",
         "has no PEER_TO_PEER bit; irdma refuses it"),
        ("irdma's rejection seen by the initiator",
         ["--profile", "irdma"] + srv, ["--profile", "plain"] + cli,
         "initiator", "rejected the connection"),
        ("CRC refused against cxgb4", ["--profile", "plain", "--x-no-crc"] +
         srv, cx + cli, "initiator", "refuses CRC: its MPA Reply has C=0"),
        ("initiator without CRC against cxgb4", cx + srv,
         ["--profile", "plain", "--x-no-crc"] + cli, "responder",
         "CRC field 0 (stream offset 0): it does not use the CRC that was "
         "agreed"),
        ("Read Requests beyond IRD", cx + srv + ["--read-chunk", "4096",
                                                 "--x-ignore-ord"],
         cx + cli + ["--ird", "2"], "initiator",
         "has 3 RDMA Read Requests outstanding; this side's IRD is 2"),
        ("Write RTR where the Read RTR was agreed", cx + srv,
         cx + cli + ["--x-rtr-type", "write"], "responder",
         "RDMA Write, 0 octets of data) is not the agreed RTR (a zero "
         "length RDMA Read Request)"),
        ("MPA Reply of a higher revision", cx + srv + ["--x-reply-rev", "3"],
         cx + cli, "initiator", "rejects a reply of a higher revision"),
        ("markers asked of cxgb4", cx + srv,
         ["--profile", "plain", "--markers"] + cli, "responder",
         "asks for markers"),
        ("corrupted RDMA Write data", cx + srv + ["--x-corrupt"], cx + cli,
         "initiator", "RDMA Write left the sink buffer different"),
        ("RDMA Write to a wrong STag", cx + srv + ["--x-bad-stag", "48879"],
         cx + cli, "initiator", "STag 0x0000beef, which this side never"),
        ("Send with a wrong MSN", cx + srv, cx + cli + ["--x-msn-skip"],
         "responder", "sent a Send with MSN 2; the next one is 1"),
    ]
    for label, resp, init, side, want in negs:
        cases.append(("must fail: " + label, lambda r=resp, n=init, s=side,
                       w=want: negative(r, n, s, w)))
    passed = failed = 0
    for label, fn in cases:
        if fn is None:
            say("skip %s: no peer-to-peer mode, and without it the responder "
                "may not send first" % label)
            continue
        t0 = time.monotonic()
        try:
            detail = fn()
            passed += 1
            say("ok   %s (%.1f s): %s" % (label, time.monotonic() - t0,
                                          detail))
        except (Fail, OSError, subprocess.TimeoutExpired) as e:
            failed += 1
            say("FAIL %s: %s" % (label, e))
    say("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    hide = argparse.SUPPRESS
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--profile", choices=sorted(PROFILES))
    ap.add_argument("--role", choices=("initiator", "responder"))
    ap.add_argument("--server", help="initiator: address to connect to")
    ap.add_argument("--listen", help="responder: address to listen on")
    ap.add_argument("--port", type=int)
    ap.add_argument("--app", choices=sorted(APPS))
    ap.add_argument("--size", type=int, default=64,
                    help="ping size, as rping -S (default 64)")
    ap.add_argument("--count", type=int, default=None,
                    help="pings (client: default 1; server: 0 = until the "
                    "client closes)")
    ap.add_argument("--markers", action="store_true",
                    help="ask to receive MPA markers (profiles that allow)")
    ap.add_argument("--crc", action="store_true",
                    help="ask for CRC even if the profile does not")
    ap.add_argument("--ird", type=int, help="override the profile's IRD")
    ap.add_argument("--ord", type=int, help="override the profile's ORD")
    ap.add_argument("--rtr", default="profile",
                    choices=("profile", "none", "read", "write", "both"),
                    help="override the RTR types offered / picked")
    ap.add_argument("--mss", type=int, help="clamp TCP_MAXSEG")
    ap.add_argument("--read-chunk", type=int, default=0,
                    help="server: split each RDMA Read into this size")
    ap.add_argument("--wait", type=float, default=30.0,
                    help="seconds the whole exchange may take")
    ap.add_argument("--them", default="the other side",
                    help="what to call the other side in messages")
    for flag in ("--x-no-crc", "--x-ignore-ord", "--x-small-recv",
                 "--x-corrupt", "--x-msn-skip"):
        ap.add_argument(flag, action="store_true", help=hide)
    for flag in ("--x-fpdu", "--x-bad-crc", "--x-reply-rev", "--x-bad-stag"):
        ap.add_argument(flag, type=int, default=0, help=hide)
    ap.add_argument("--x-rtr-type", choices=("read", "write"), help=hide)
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    if not (a.profile and a.role and a.app and a.port):
        ap.error("--profile, --role, --app and --port are needed")
    if (a.role == "initiator") != bool(a.server) or \
            (a.role == "responder") != bool(a.listen):
        ap.error("an initiator takes --server, a responder --listen")
    if a.markers and not PROFILES[a.profile]["markers"]:
        ap.error("profile %s never uses markers" % a.profile)
    if not RPING_MIN <= a.size <= 1 << 24:
        ap.error("--size must be %d..%d" % (RPING_MIN, 1 << 24))
    for v in (a.ird, a.ord):
        if v is not None and not 0 <= v <= IRD_ORD_MASK:
            ap.error("IRD and ORD are 14 bit numbers")
    if a.count is None:
        a.count = 1 if a.app == "rping-client" else 0
    if a.app == "rping-client" and a.count < 1:
        ap.error("the client needs --count of at least 1")
    try:
        run(a)
    except (Fail, OSError) as e:
        say("FAIL: %s" % e)
        return 1
    say("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
