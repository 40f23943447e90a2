#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""rdma_cm connection rejection, for tests/vm/265-cm-states.sh (pyverbs).

    cm_reject.py server ADDR PORT COUNT MESSAGE
        listen on ADDR:PORT, refuse COUNT connection requests with
        rdma_reject() and MESSAGE as private data, then exit
    cm_reject.py client ADDR PORT MESSAGE
        connect to ADDR:PORT; the connection must be refused
        (RDMA_CM_EVENT_REJECTED) and the private data of the refusal must
        start with MESSAGE

Prints what happens; exit 0 when it went as described, 1 otherwise.
"""

import sys

import pyverbs.cm_enums as ce
import pyverbs.enums as e
from pyverbs.cmid import AddrInfo, CMEvent, CMEventChannel, CMID, ConnParam
from pyverbs.qp import QPCap, QPInitAttr


def server(addr, port, count, msg):
    ch = CMEventChannel()
    lid = CMID(creator=ch, port_space=ce.RDMA_PS_TCP)
    lid.bind_addr(AddrInfo(src=addr, src_service=port,
                           port_space=ce.RDMA_PS_TCP, flags=ce.RAI_PASSIVE))
    lid.listen(backlog=8)
    print("listening on %s:%s" % (addr, port), flush=True)
    done = 0
    while done < count:
        ev = CMEvent(ch)
        if ev.event_type != ce.RDMA_CM_EVENT_CONNECT_REQUEST:
            print("ignoring event %d" % ev.event_type, flush=True)
            ev.ack_cm_event()
            continue
        child = CMID(creator=ev, listen_id=lid)
        ev.ack_cm_event()
        child.reject(msg)
        done += 1
        print("rejected request %d" % done, flush=True)
        child.close()
    return 0


def client(addr, port, msg):
    ch = CMEventChannel()
    cid = CMID(creator=ch, port_space=ce.RDMA_PS_TCP)
    cid.resolve_addr(AddrInfo(dst=addr, dst_service=port,
                              port_space=ce.RDMA_PS_TCP))
    for want in (ce.RDMA_CM_EVENT_ADDR_RESOLVED,
                 ce.RDMA_CM_EVENT_ROUTE_RESOLVED):
        ev = CMEvent(ch)
        kind = ev.event_type
        ev.ack_cm_event()
        if kind != want:
            print("FAIL: event %d, expected %d" % (kind, want))
            return 1
        if want == ce.RDMA_CM_EVENT_ADDR_RESOLVED:
            cid.resolve_route()
    cid.create_qp(QPInitAttr(qp_type=e.IBV_QPT_RC, cap=QPCap(max_recv_wr=1)))
    cid.connect(ConnParam())
    ev = CMEvent(ch)
    kind, pd = ev.event_type, bytes(ev.private_data or b"")
    ev.ack_cm_event()
    print("event %d, private data %r" % (kind, pd[:len(msg) + 8]), flush=True)
    if kind != ce.RDMA_CM_EVENT_REJECTED:
        print("FAIL: expected RDMA_CM_EVENT_REJECTED (%d)" %
              ce.RDMA_CM_EVENT_REJECTED)
        return 1
    if not pd.startswith(msg):
        print("FAIL: the refusal does not carry %r" % msg)
        return 1
    print("rejected, with our private data")
    cid.close()
    return 0


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "server":
        return server(sys.argv[2], sys.argv[3], int(sys.argv[4]),
                      sys.argv[5].encode())
    if len(sys.argv) == 5 and sys.argv[1] == "client":
        return client(sys.argv[2], sys.argv[3], sys.argv[4].encode())
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
