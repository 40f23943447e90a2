#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""
qpc-peer.py: one end of an RC QP pair connected without rdma_cm, as
ibv_rc_pingpong does it (QP number and GID exchanged over a TCP socket,
then modify_qp to RTR and RTS), with knobs for the races of
tests/vm/285-qp-connect-races.sh. Runs in the guest with Debian's python
and pyverbs.

  qpc-peer.py --dev DEV [--gid N] [--port P] [--connect HOST] [options]

Without --connect it is the server: it waits for one client on TCP port P.
Both ends exchange {qpn, gid} as a JSON line, move their QP to RTR and
RTS, and ping-pong --iters messages of --size bytes (the client sends,
the server checks and echoes, the client checks), then wait for each
other ("done" on the socket) before they destroy anything.

Options for the races:
  --sync S           both ends modify at the same instant: the server picks
                     a wall-clock time S seconds ahead and tells the client
  --delay S          this end waits S seconds before it moves to RTR
  --hold STATE       stop in STATE and sleep (to be killed): "init" (before
                     RTR), "rtr" (after RTR, before RTS) or "rts" (after RTS
                     and the first message)
  --qpn-offset N     give modify_qp the peer's QP number plus N (a wrong one)
  --wait S           bound on each wait for a completion (default 30)
  --no-done          no "done" barrier at the end: the server destroys its QP
                     once its last send completed, as ibv_rc_pingpong does

Every line it prints starts with "qpc-peer [seconds since start]"; the
first one gives its process ID ("pid N", for a test that kills it). The
last line is "result: ok ..." or "result: error ..."; async events appear
as "async event N". Exit status: 0 traffic done, 1 a completion failed or
did not come, 2 setup or exchange failed, 3 modify_qp failed.
"""

import argparse
import json
import os
import select
import socket
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

T0 = time.monotonic()
RECV_DEPTH = 8
SEND_WRID = 1 << 20

WC_STATUS = {
    0: 'success', 1: 'local length error', 2: 'local QP operation error',
    4: 'local protection error', 5: 'WR flush error',
    9: 'remote invalid request', 10: 'remote access error',
    11: 'remote operation error', 12: 'retry exceeded',
    13: 'RNR retry exceeded', 19: 'fatal error', 21: 'general error',
}


def log(msg):
    print(f'qpc-peer [{time.monotonic() - T0:7.3f}] {msg}', flush=True)


def finish(rc, msg):
    log(f'result: {"ok" if rc == 0 else "error"}: {msg}')
    sys.exit(rc)


class Failed(Exception):
    pass


def exchange(args, mine):
    """Swap {qpn, gid} with the peer; returns (socket, peer's dict)."""
    if args.connect is None:
        with socket.create_server(('0.0.0.0', args.port)) as ls:
            ls.settimeout(args.accept_timeout)
            log(f'waiting for a client on port {args.port}')
            s, _ = ls.accept()
        s.settimeout(None)
        peer = json.loads(s.makefile().readline())
        if args.sync:
            mine['at'] = time.time() + args.sync
        s.sendall((json.dumps(mine) + '\n').encode())
        if args.sync:
            peer['at'] = mine['at']
        return s, peer
    end = time.monotonic() + args.accept_timeout
    while True:
        try:
            s = socket.create_connection((args.connect, args.port), timeout=5)
            break
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.1)
    s.settimeout(None)
    s.sendall((json.dumps(mine) + '\n').encode())
    return s, json.loads(s.makefile().readline())


def async_fd():
    """
    The context's async event file: pyverbs does not expose it, and its
    get_async_event() blocks holding the GIL. Without a completion channel
    it is the only "[infinibandevent]" file of the process.
    """
    for fd in os.listdir('/proc/self/fd'):
        try:
            if os.readlink(f'/proc/self/fd/{fd}') == 'anon_inode:[infinibandevent]':
                return int(fd)
        except OSError:
            pass
    return None


class End:
    def __init__(self, args):
        self.args = args
        self.ctx = Context(name=args.dev)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 64, None, None, 0)
        self.size = args.size
        # One send buffer, then RECV_DEPTH receive slots.
        self.mr = MR(self.pd, self.size * (1 + RECV_DEPTH),
                     e.IBV_ACCESS_LOCAL_WRITE)
        cap = QPCap(max_send_wr=16, max_recv_wr=RECV_DEPTH * 2,
                    max_send_sge=1, max_recv_sge=1)
        self.qp = QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq,
                                         rcq=self.cq, cap=cap))
        attr = QPAttr(qp_state=e.IBV_QPS_INIT)
        attr.pkey_index = 0
        attr.port_num = 1
        attr.qp_access_flags = (e.IBV_ACCESS_LOCAL_WRITE |
                                e.IBV_ACCESS_REMOTE_WRITE |
                                e.IBV_ACCESS_REMOTE_READ)
        self.qp.modify(attr, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
                       e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
        self.gid = str(self.ctx.query_gid(1, args.gid))
        self.async_fd = async_fd()
        self.events = []
        self.t_rtr = None
        self.pending = []	# completions polled but not yet asked for

    def post_recv(self, slot):
        sge = SGE(self.mr.buf + self.size * (1 + slot), self.size,
                  self.mr.lkey)
        self.qp.post_recv(RecvWR(wr_id=slot, num_sge=1, sg=[sge]))

    def post_send(self, data):
        self.mr.write(data, len(data), 0)
        sge = SGE(self.mr.buf, len(data), self.mr.lkey)
        self.qp.post_send(SendWR(wr_id=SEND_WRID, opcode=e.IBV_WR_SEND,
                                 num_sge=1, sg=[sge],
                                 send_flags=e.IBV_SEND_SIGNALED))

    def to_rtr(self, peer):
        attr = QPAttr(qp_state=e.IBV_QPS_RTR)
        attr.path_mtu = e.IBV_MTU_1024
        attr.dest_qp_num = peer['qpn'] + self.args.qpn_offset
        attr.rq_psn = 0
        attr.max_dest_rd_atomic = 1
        attr.min_rnr_timer = 12
        gr = GlobalRoute(dgid=GID(peer['gid']), sgid_index=self.args.gid)
        attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr, dlid=0)
        self.qp.modify(attr, e.IBV_QP_STATE | e.IBV_QP_AV |
                       e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN |
                       e.IBV_QP_RQ_PSN | e.IBV_QP_MAX_DEST_RD_ATOMIC |
                       e.IBV_QP_MIN_RNR_TIMER)
        self.t_rtr = time.monotonic()

    def to_rts(self):
        attr = QPAttr(qp_state=e.IBV_QPS_RTS)
        attr.timeout = 14
        attr.retry_cnt = 7
        attr.rnr_retry = 7
        attr.sq_psn = 0
        attr.max_rd_atomic = 1
        self.qp.modify(attr, e.IBV_QP_STATE | e.IBV_QP_TIMEOUT |
                       e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY |
                       e.IBV_QP_SQ_PSN | e.IBV_QP_MAX_QP_RD_ATOMIC)

    def check_async(self):
        """Report the async events that came (never blocks)."""
        while self.async_fd is not None and \
                select.select([self.async_fd], [], [], 0)[0]:
            ev = self.ctx.get_async_event()
            self.events.append(ev.event_type)
            log(f'async event {ev.event_type}, {self.since_rtr()}')
            ev.ack()

    def since_rtr(self):
        if self.t_rtr is None:
            return 'before RTR'
        return f'{(time.monotonic() - self.t_rtr) * 1000:.0f} ms after RTR'

    def wait(self, want_send):
        """The next send (want_send) or receive completion: its slot."""
        end = time.monotonic() + self.args.wait
        while True:
            for i, wc in enumerate(self.pending):
                if wc.status != e.IBV_WC_SUCCESS:
                    raise Failed(f'completion of wr_id {wc.wr_id}: '
                                 f'{WC_STATUS.get(wc.status, wc.status)} '
                                 f'({wc.status}), {self.since_rtr()}')
                if (wc.wr_id == SEND_WRID) == want_send:
                    del self.pending[i]
                    return wc.wr_id
            if time.monotonic() > end:
                raise Failed(f'no {"send" if want_send else "receive"} '
                             f'completion within {self.args.wait} s, '
                             f'{self.since_rtr()}')
            self.check_async()
            n, wcs = self.cq.poll(8)
            if n:
                self.pending.extend(wcs)
            else:
                time.sleep(0.001)


def message(i, size):
    head = i.to_bytes(4, 'big')
    return head + bytes([(i * 7 + 1) & 0xff]) * (size - 4)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('--dev', required=True)
    ap.add_argument('--gid', type=int, default=1)
    ap.add_argument('--port', type=int, default=18600)
    ap.add_argument('--connect')
    ap.add_argument('--iters', type=int, default=100)
    ap.add_argument('--size', type=int, default=4096)
    ap.add_argument('--sync', type=float, default=0)
    ap.add_argument('--delay', type=float, default=0)
    ap.add_argument('--hold', choices=('init', 'rtr', 'rts'))
    ap.add_argument('--qpn-offset', type=int, default=0)
    ap.add_argument('--wait', type=float, default=30)
    ap.add_argument('--no-done', action='store_true')
    ap.add_argument('--accept-timeout', type=float, default=60)
    args = ap.parse_args()
    if args.size < 4:
        ap.error('--size must be 4 or more')

    log(f'pid {os.getpid()}')
    try:
        end = End(args)
    except PyverbsError as ex:
        finish(2, f'setup: {ex}')
    if end.async_fd is None:
        log('no async event file found: async events are not reported')
    for slot in range(RECV_DEPTH):
        end.post_recv(slot)
    try:
        sock, peer = exchange(args, {'qpn': end.qp.qp_num, 'gid': end.gid})
    except (OSError, ValueError) as ex:
        finish(2, f'exchange: {ex}')
    log(f'QP {end.qp.qp_num} GID {end.gid}; peer QP {peer["qpn"]} '
        f'GID {peer["gid"]}; modify_qp gets QP {peer["qpn"] + args.qpn_offset}')

    if 'at' in peer:
        time.sleep(max(0.0, peer['at'] - time.time()))
        log('the agreed instant')
    if args.delay:
        log(f'waiting {args.delay} s before RTR')
        time.sleep(args.delay)
    if args.hold == 'init':
        log('holding before RTR')
        while True:
            time.sleep(60)
    try:
        end.to_rtr(peer)
        log('RTR')
        if args.hold == 'rtr':
            log('holding in RTR')
            while True:
                time.sleep(60)
        end.to_rts()
        log('RTS')
    except PyverbsError as ex:
        finish(3, f'modify_qp: {ex}')

    slot = 0
    try:
        for i in range(args.iters):
            want = message(i, args.size)
            if args.connect is not None:
                end.post_send(want)
                end.wait(True)
                slot = end.wait(False)
            else:
                slot = end.wait(False)
            got = end.mr.read(args.size, args.size * (1 + slot))
            if got != want:
                raise Failed(f'message {i}: wrong data')
            end.post_recv(slot)
            if args.connect is None:
                end.post_send(got)
                end.wait(True)
            if i == 0:
                log('first message through')
                if args.hold == 'rts':
                    log('holding in RTS')
                    while True:
                        time.sleep(60)
    except Failed as ex:
        # An async event may trail the flushed completions a little.
        time.sleep(0.2)
        end.check_async()
        finish(1, str(ex))
    except PyverbsError as ex:
        finish(1, f'post: {ex}')

    if args.no_done:
        finish(0, f'{args.iters} messages of {args.size} B, {end.since_rtr()}'
               ' (no barrier)')
    # Neither end tears down (and flushes the other) before both are done.
    try:
        sock.settimeout(args.wait)
        sock.sendall(b'done\n')
        sock.makefile().readline()
    except OSError:
        pass
    finish(0, f'{args.iters} messages of {args.size} B, {end.since_rtr()}')


if __name__ == '__main__':
    main()
