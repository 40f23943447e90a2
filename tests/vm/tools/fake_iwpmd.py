#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A lying iWARP port mapper, for tests/vm/163-hostile-portmap.

iw_cm's port mapper client takes its answers from whoever speaks the
iwpm netlink protocol (RDMA netlink, client RDMA_NL_IWCM). This program
does, the way iwpmd would, but maps every listen (add mapping) and every
connect (add and query mapping) to the ports it is told to, whether a
socket of this host holds them or not, and keeps no socket of its own.
siw must refuse to listen on a mapped port where a host socket listens.

  fake_iwpmd.py --listen-port N [--remote-port M]

Answers: register pid (as iwpmd's library, version 4); add mapping
(listen): the address with port N; add and query mapping (connect): the
local address as it is, the remote one with port M (default N). Every
request is printed, one line each. Runs until killed.
"""

import argparse
import socket
import struct
import sys
import time

NETLINK_RDMA = 20
RDMA_NL_IWCM = 2
RDMA_NL_GROUP_IWPM = 2
NLM_F_REQUEST = 1
OP_REG_PID, OP_ADD_MAPPING, OP_QUERY_MAPPING, OP_MAPINFO = 0, 1, 2, 6
ULIB_NAME = b"iWarpPortMapperUser\0"
ULIB_VERSION = 4
SS_LEN = 128  # struct sockaddr_storage


def nl_type(op):
    return (RDMA_NL_IWCM << 10) + op


def attrs(buf):
    """The attributes of a netlink message body: {type: bytes}."""
    out, off = {}, 0
    while off + 4 <= len(buf):
        alen, atype = struct.unpack_from("=HH", buf, off)
        if alen < 4:
            break
        out[atype & 0x3FFF] = buf[off + 4:off + alen]
        off += (alen + 3) & ~3
    return out


def attr(atype, data):
    a = struct.pack("=HH", 4 + len(data), atype) + data
    return a + b"\0" * (-len(a) % 4)


def msg(op, seq, portid, body):
    # iw_cm takes the sender's id from the header (as iwpmd fills it in),
    # not from the socket: it must be our port id.
    return struct.pack("=IHHII", 16 + len(body), nl_type(op), NLM_F_REQUEST,
                       seq, portid) + body


def with_port(ss, port):
    """A sockaddr_storage (bytes) with its port replaced (IPv4 and IPv6
    keep the port at the same offset)."""
    return ss[:2] + struct.pack("!H", port) + ss[4:SS_LEN]


def show(ss):
    fam, port = struct.unpack_from("=H", ss)[0], struct.unpack_from("!H", ss, 2)[0]
    if fam == socket.AF_INET:
        return "%s:%u" % (socket.inet_ntop(socket.AF_INET, ss[4:8]), port)
    if fam == socket.AF_INET6:
        return "[%s]:%u" % (socket.inet_ntop(socket.AF_INET6, ss[8:24]), port)
    return "family %u" % fam


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen-port", type=int, required=True)
    ap.add_argument("--remote-port", type=int)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    rport = args.remote_port or args.listen_port

    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)
    s.bind((0, 1 << (RDMA_NL_GROUP_IWPM - 1)))
    me = s.getsockname()[0]
    # Announce ourselves as iwpmd does at its start: iw_cm stops asking
    # after a registration that nobody heard, until a mapper says this.
    s.sendto(msg(OP_MAPINFO, 1, me, attr(1, ULIB_NAME) +
                 attr(2, struct.pack("=H", ULIB_VERSION))), (0, 0))
    print("fake_iwpmd: up, listens map to port %u, connects to port %u"
          % (args.listen_port, rport), flush=True)
    while True:
        data = s.recv(65536)
        off = 0
        while off + 16 <= len(data):
            ln, typ, _flags, seq, _pid = struct.unpack_from("=IHHII", data, off)
            if ln < 16:
                break
            body = attrs(data[off + 16:off + ln])
            off += (ln + 3) & ~3
            if args.verbose:
                with open("/proc/uptime") as f:
                    up = f.read().split()[0]
                print("fake_iwpmd: [%s] got type %#x seq %u attrs %s"
                      % (up, typ, seq, sorted(body)), flush=True)
            if typ >> 10 != RDMA_NL_IWCM:
                continue
            op = typ & 0x3FF
            if op == OP_REG_PID:
                # Debian's 6.1 iw_cm sends this request before it records
                # where the answer goes; an answer in between is a NULL
                # dereference in iwpm_register_pid_cb() (tests/vm/pair.sh,
                # iwpmd_register). Half a second is long after that.
                time.sleep(0.5)
                dev = body.get(3, b"\0")  # IWPM_NLA_REG_IBDEV_NAME
                reply = (attr(1, struct.pack("=I", seq)) + attr(2, dev.split(b"\0")[0] + b"\0") +
                         attr(3, ULIB_NAME) + attr(4, struct.pack("=H", ULIB_VERSION)) +
                         attr(5, struct.pack("=H", 0)))
                print("fake_iwpmd: register pid for %s" % dev.split(b"\0")[0].decode(),
                      flush=True)
            elif op == OP_ADD_MAPPING:
                loc = body[2][:SS_LEN]
                mapped = with_port(loc, args.listen_port)
                reply = (attr(1, struct.pack("=I", seq)) + attr(2, loc) + attr(3, mapped) +
                         attr(4, struct.pack("=H", 0)))
                print("fake_iwpmd: listen %s mapped to %s" % (show(loc), show(mapped)),
                      flush=True)
            elif op == OP_QUERY_MAPPING:
                loc, rem = body[2][:SS_LEN], body[3][:SS_LEN]
                mrem = with_port(rem, rport)
                reply = (attr(1, struct.pack("=I", seq)) + attr(2, loc) + attr(3, rem) +
                         attr(4, loc) + attr(5, mrem) + attr(6, struct.pack("=H", 0)))
                print("fake_iwpmd: connect %s -> %s mapped to %s" % (show(loc), show(rem),
                                                                    show(mrem)), flush=True)
            else:
                continue
            # iw_cm finds its request by the sequence number of the
            # request's header, which the answer carries as an attribute;
            # the answer's header carries the one the request's attribute
            # holds (iw_cm's echo).
            echo = struct.unpack("=I", body[1][:4])[0] if 1 in body else 0
            s.sendto(msg(op, echo, me, reply), (0, 0))
            if args.verbose:
                with open("/proc/uptime") as f:
                    print("fake_iwpmd: [%s] answered" % f.read().split()[0], flush=True)


if __name__ == "__main__":
    sys.exit(main())
