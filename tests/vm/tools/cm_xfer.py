#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A known transfer over one rdma_cm connection, in steps the caller paces
(pyverbs), for tests/vm/216-qp-details.sh: between the steps the QPs stay
up and idle, so that their details can be read before and after.

    cm_xfer.py server ADDR PORT SIZE
        accept one connection on ADDR:PORT, register SIZE bytes the peer
        may write and read, send their address and rkey, print
        "server qpn N", and exit once the client's "bye" Send came
    cm_xfer.py client ADDR PORT WRITES SIZE READ
        connect to ADDR:PORT, learn the server's buffer and print
        "ready qpn N"; after a line on stdin do WRITES RDMA Writes of SIZE
        bytes (a pattern, each at its own offset, wrapping within the
        server's buffer) and then one RDMA Read of READ bytes from the
        start of it, each waited for, check that the Read returned what
        was written and print "done"; after the next line send "bye" and
        disconnect

Every completion must succeed. Exit 0 when it went as described, 1 with a
"FAIL:" line otherwise.
"""

import struct
import sys

import pyverbs.cm_enums as ce
import pyverbs.enums as e
from pyverbs.cmid import AddrInfo, CMID, ConnParam
from pyverbs.mr import MR
from pyverbs.qp import QPCap, QPInitAttr

INFO = struct.Struct("!QII")    # address, rkey, length of the buffer
HELLO = b"bye"


def qp_attr():
    return QPInitAttr(qp_type=e.IBV_QPT_RC, sq_sig_all=1,
                      cap=QPCap(max_send_wr=8, max_recv_wr=8,
                                max_send_sge=1, max_recv_sge=1))


def param():
    return ConnParam(resources=4, depth=4)


def wait_ok(get, what):
    wc = get()
    if wc is None:
        raise SystemExit("FAIL: no completion for %s" % what)
    if wc.status != e.IBV_WC_SUCCESS:
        raise SystemExit("FAIL: %s completed with status %d" % (what, wc.status))
    return wc


def pattern(n, size):
    return bytes((n * 7 + i) & 0xff for i in range(size))


def server(addr, port, size):
    lid = CMID(creator=AddrInfo(src=addr, src_service=port,
                                port_space=ce.RDMA_PS_TCP,
                                flags=ce.RAI_PASSIVE),
               qp_init_attr=qp_attr())
    lid.listen(backlog=1)
    print("listening on %s:%s" % (addr, port), flush=True)
    cid = lid.get_request()
    buf = MR(cid.pd, size, e.IBV_ACCESS_LOCAL_WRITE |
             e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ)
    msg = cid.reg_msgs(64)
    cid.post_recv(msg, length=64)
    cid.accept(param())
    info = INFO.pack(buf.buf, buf.rkey, size)
    msg_out = cid.reg_msgs(INFO.size)
    msg_out.write(info, INFO.size)
    cid.post_send(msg_out, length=INFO.size)
    wait_ok(cid.get_send_comp, "the Send of the buffer's address")
    print("server qpn %d" % cid.qpn, flush=True)
    wc = wait_ok(cid.get_recv_comp, "the client's last Send")
    got = msg.read(wc.byte_len, 0)
    if bytes(got) != HELLO:
        raise SystemExit("FAIL: the client sent %r, not %r" % (got, HELLO))
    print("bye received", flush=True)
    cid.disconnect()
    cid.close()
    lid.close()
    return 0


def client(addr, port, writes, size, read):
    cid = CMID(creator=AddrInfo(dst=addr, dst_service=port,
                                port_space=ce.RDMA_PS_TCP),
               qp_init_attr=qp_attr())
    msg = cid.reg_msgs(64)
    cid.post_recv(msg, length=64)
    cid.connect(param())
    wc = wait_ok(cid.get_recv_comp, "the server's buffer address")
    raddr, rkey, rlen = INFO.unpack(bytes(msg.read(wc.byte_len, 0)))
    if rlen < size or rlen < read:
        raise SystemExit("FAIL: the server's buffer has %d bytes" % rlen)
    src = cid.reg_msgs(max(size, read))
    print("ready qpn %d" % cid.qpn, flush=True)

    sys.stdin.readline()
    slots = rlen // size
    expect = bytearray(rlen)
    for n in range(writes):
        data = pattern(n, size)
        off = (n % slots) * size
        src.write(data, size)
        cid.post_write(src, size, raddr + off, rkey)
        wait_ok(cid.get_send_comp, "RDMA Write %d" % n)
        expect[off:off + size] = data
    dst = cid.reg_msgs(read)
    cid.post_read(dst, read, raddr, rkey)
    wait_ok(cid.get_send_comp, "the RDMA Read")
    if bytes(dst.read(read, 0)) != bytes(expect[:read]):
        raise SystemExit("FAIL: the RDMA Read did not return what was written")
    print("done: %d writes of %d bytes, a read of %d bytes, data checked" %
          (writes, size, read), flush=True)

    sys.stdin.readline()
    src.write(HELLO, len(HELLO))
    cid.post_send(src, length=len(HELLO))
    wait_ok(cid.get_send_comp, "the last Send")
    cid.disconnect()
    cid.close()
    return 0


def main():
    a = sys.argv[1:]
    if len(a) == 4 and a[0] == "server":
        return server(a[1], a[2], int(a[3]))
    if len(a) == 6 and a[0] == "client":
        return client(a[1], a[2], int(a[3]), int(a[4]), int(a[5]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
