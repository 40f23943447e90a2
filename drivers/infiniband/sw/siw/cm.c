// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Connection endpoints: TCP connections and the MPA exchange on them, for
 * two kinds of owner (struct siw_cep_ops): iw_cm (cm_iw.c) and a QP
 * connected without rdma_cm (qp_connect.c).
 *
 * A connection endpoint (struct siw_cep) lives from connect() or from the
 * TCP accept until the connection is closed:
 *
 *	active:  NEW -> CONNECTING -> AWAIT_REPLY -> CONNECTED
 *	passive: NEW -> AWAIT_REQUEST -> REQUESTED -> CONNECTED
 *	then:    CONNECTED -> [DRAINING ->] CLOSED
 *
 * (any state may go to CLOSED). A NEW endpoint is locked by its creator
 * until it has moved on. A graceful close of a connection that was up
 * lets go of the QP and its owner at once, and keeps the socket DRAINING
 * until the peer closes too (siw_cep_drain_begin()).
 *
 * Socket upcalls and the setup timer only set an event bit and queue the
 * endpoint's work item; the work item (and the accept/reject verbs) do
 * the I/O under the endpoint's mutex. Once CONNECTED, the socket's data
 * and write space upcalls go straight to the engine of the QP.
 *
 * Listeners (cm_listen.c) create the passive endpoints, of their own
 * kind. What an owner hears, and when, is its ops' business; the order
 * of the steps is this file's.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "cm.h"
#include "cm_cep.h"
#include "engine.h"
#include "portmap.h"
#include "qp.h"
#include "siw.h"
#include "trace.h"
#include "proto/mpa.h"

static uint mpa_crc = SIW_MPA_CRC_PEER;
module_param(mpa_crc, uint, 0644);
MODULE_PARM_DESC(mpa_crc,
		 "MPA CRC32C: 0 never, 1 if the peer asks for it (default), 2 always");

static uint mpa_rev = SIW_MPA_REV_2;
module_param(mpa_rev, uint, 0644);
MODULE_PARM_DESC(mpa_rev, "MPA revision to request: 1 or 2 (default 2)");

static bool mpa_markers;
module_param(mpa_markers, bool, 0644);
MODULE_PARM_DESC(mpa_markers,
		 "Ask peers to put MPA markers into what they send to siw (default N); siw sends markers to any peer that asks");

static uint mpa_timeout_ms = 10000;
module_param(mpa_timeout_ms, uint, 0644);
MODULE_PARM_DESC(mpa_timeout_ms,
		 "How long TCP connect plus MPA exchange may take (default 10000)");

unsigned int siw_cm_mpa_timeout_ms(void)
{
	return READ_ONCE(mpa_timeout_ms);
}

static uint mpa_accept_timeout_ms = 60000;
module_param(mpa_accept_timeout_ms, uint, 0644);
MODULE_PARM_DESC(mpa_accept_timeout_ms,
		 "How long a connection request may wait for the consumer's accept or reject (default 60000)");

unsigned int siw_cm_accept_timeout_ms(void)
{
	return READ_ONCE(mpa_accept_timeout_ms);
}

struct workqueue_struct *siw_cm_wq;

/*
 * Endpoints by id: iw_cm's handle of a connection request. Ids go round
 * all 32 bits before one is used again, so that a handle iw_cm kept past
 * its endpoint's end finds nothing rather than a newer connection.
 */
static DEFINE_XARRAY_ALLOC1(siw_ceps);
static u32 siw_cep_next_id;

void siw_cm_policy(struct siw_mpa_policy *pol, u16 ird, u16 ord, bool p2p)
{
	uint crc = READ_ONCE(mpa_crc);

	pol->rev = READ_ONCE(mpa_rev) == SIW_MPA_REV_1 ? SIW_MPA_REV_1 :
							 SIW_MPA_REV_2;
	pol->crc = crc > SIW_MPA_CRC_ALWAYS ? SIW_MPA_CRC_ALWAYS : crc;
	/* What a consumer asks for, within what the engine keeps track of. */
	pol->ird = siw_ird_cap(ird);
	pol->ord = siw_ord_cap(ord);
	pol->p2p = p2p;
	pol->rtr = SIW_MPA_RTR_WRITE | SIW_MPA_RTR_READ;
	pol->large = siw_tx_offers_large();
	pol->markers = READ_ONCE(mpa_markers);
}

/* ------------------------------------------------------------------------
 * Endpoint life.
 */

static void siw_cep_release(struct kref *ref)
{
	kfree(container_of(ref, struct siw_cep, ref));
}

void siw_cep_put(struct siw_cep *cep)
{
	kref_put(&cep->ref, siw_cep_release);
}

void siw_cep_event(struct siw_cep *cep, int ev)
{
	set_bit(ev, &cep->events);
	kref_get(&cep->ref);
	if (!queue_work(siw_cm_wq, &cep->work))
		siw_cep_put(cep);
}

void siw_cep_set_state(struct siw_cep *cep, enum siw_cep_state to)
{
	lockdep_assert_held(&cep->mutex);
	trace_siw_cep_state(cep->sdev, cep->id, &cep->laddr, &cep->raddr,
			    cep->state, to);
	cep->state = to;
}

static void siw_cep_timeout(struct timer_list *t)
{
	struct siw_cep *cep = from_timer(cep, t, timer);

	siw_cep_event(cep, SIW_CEP_EV_TIMEOUT);
}

void siw_cep_arm(struct siw_cep *cep, unsigned int ms)
{
	mod_timer(&cep->timer, jiffies + msecs_to_jiffies(ms));
}

static void siw_cep_work(struct work_struct *work);

/* A new endpoint of @ops' kind; the table holds the reference returned. */
struct siw_cep *siw_cep_alloc(struct siw_device *sdev,
			      const struct siw_cep_ops *ops)
{
	struct siw_cep *cep = kzalloc(sizeof(*cep), GFP_KERNEL);

	if (!cep)
		return NULL;
	kref_init(&cep->ref);
	cep->ops = ops;
	cep->sdev = sdev;
	mutex_init(&cep->mutex);
	INIT_WORK(&cep->work, siw_cep_work);
	timer_setup(&cep->timer, siw_cep_timeout, 0);
	INIT_LIST_HEAD(&cep->lnode);
	/* Found by ID from here on: whoever finds it waits for its setup. */
	mutex_lock(&cep->mutex);
	if (xa_alloc_cyclic(&siw_ceps, &cep->id, cep, xa_limit_32b,
			    &siw_cep_next_id, GFP_KERNEL) < 0) {
		mutex_unlock(&cep->mutex);
		kfree(cep);
		return NULL;
	}
	return cep;
}

ALLOW_ERROR_INJECTION(siw_cep_alloc, NULL);

struct siw_cep *siw_cep_lookup(u32 id)
{
	struct siw_cep *cep;

	xa_lock(&siw_ceps);
	cep = xa_load(&siw_ceps, id);
	if (cep && !kref_get_unless_zero(&cep->ref))
		cep = NULL;
	xa_unlock(&siw_ceps);
	return cep;
}

void siw_cep_unlock(struct siw_cep *cep)
{
	bool put = cep->put_alive;

	cep->put_alive = false;
	mutex_unlock(&cep->mutex);
	if (put)
		siw_cep_put(cep);
}

/* ------------------------------------------------------------------------
 * Socket upcalls.
 */

static void siw_cep_sk_state_change(struct sock *sk)
{
	struct siw_cep *cep;

	read_lock_bh(&sk->sk_callback_lock);
	cep = sk->sk_user_data;
	if (cep) {
		switch (sk->sk_state) {
		case TCP_ESTABLISHED:
			siw_cep_event(cep, SIW_CEP_EV_CONNECTED);
			break;
		case TCP_CLOSE:
		case TCP_CLOSE_WAIT:
			siw_cep_event(cep, SIW_CEP_EV_HUP);
			break;
		default:
			break;
		}
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/* tcp_read_sock() actor of a draining endpoint: nothing places it. */
static int siw_cep_drop(read_descriptor_t *desc, struct sk_buff *skb,
			unsigned int off, size_t len)
{
	return len;
}

/* Drop what the socket holds; the caller holds the socket (or BH) lock. */
static void siw_cep_drop_rx(struct sock *sk)
{
	read_descriptor_t desc = { .count = 1 };

	tcp_read_sock(sk, &desc, siw_cep_drop);
}

static void siw_cep_sk_data_ready(struct sock *sk)
{
	struct siw_cep *cep;
	struct siw_qp *qp;

	read_lock_bh(&sk->sk_callback_lock);
	cep = sk->sk_user_data;
	if (cep) {
		qp = READ_ONCE(cep->data_qp);
		if (qp)
			siw_rx_read_sock(qp, sk);
		else if (READ_ONCE(cep->drop_rx))
			siw_cep_drop_rx(sk);
		else
			siw_cep_event(cep, SIW_CEP_EV_DATA);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void siw_cep_sk_write_space(struct sock *sk)
{
	struct siw_cep *cep;
	struct siw_qp *qp;

	read_lock_bh(&sk->sk_callback_lock);
	cep = sk->sk_user_data;
	qp = cep ? READ_ONCE(cep->data_qp) : NULL;
	if (qp)
		siw_tx_write_space(qp, sk);
	read_unlock_bh(&sk->sk_callback_lock);
}

void siw_cep_sock_hook(struct siw_cep *cep, struct socket *sock)
{
	struct sock *sk = sock->sk;

	tcp_sock_set_nodelay(sk);
	sk->sk_allocation = GFP_NOIO;
	write_lock_bh(&sk->sk_callback_lock);
	cep->sock = sock;
	cep->sk_state_change = sk->sk_state_change;
	cep->sk_data_ready = sk->sk_data_ready;
	cep->sk_write_space = sk->sk_write_space;
	WRITE_ONCE(sk->sk_state_change, siw_cep_sk_state_change);
	WRITE_ONCE(sk->sk_data_ready, siw_cep_sk_data_ready);
	WRITE_ONCE(sk->sk_write_space, siw_cep_sk_write_space);
	sk->sk_user_data = cep;
	write_unlock_bh(&sk->sk_callback_lock);
	WRITE_ONCE(cep->net, sock_net(sk));
}

/*
 * After this no upcall reaches the QP; the endpoint's own ones still run,
 * and its data upcall drops what comes (DRAINING).
 */
static void siw_cep_sock_qp_off(struct siw_cep *cep)
{
	struct sock *sk = cep->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	WRITE_ONCE(cep->data_qp, NULL);
	WRITE_ONCE(cep->drop_rx, true);
	write_unlock_bh(&sk->sk_callback_lock);
}

/* After this no upcall runs for the endpoint or its QP. */
static void siw_cep_sock_unhook(struct siw_cep *cep)
{
	struct sock *sk = cep->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	WRITE_ONCE(sk->sk_state_change, cep->sk_state_change);
	WRITE_ONCE(sk->sk_data_ready, cep->sk_data_ready);
	WRITE_ONCE(sk->sk_write_space, cep->sk_write_space);
	sk->sk_user_data = NULL;
	WRITE_ONCE(cep->data_qp, NULL);
	write_unlock_bh(&sk->sk_callback_lock);
}

noinline int siw_cep_send(struct siw_cep *cep, const void *buf, size_t len)
{
	struct kvec kv = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
	int rv;

	rv = kernel_sendmsg(cep->sock, &msg, &kv, 1, len);
	if (rv == len)
		return 0;
	return rv < 0 ? rv : -EAGAIN;
}

ALLOW_ERROR_INJECTION(siw_cep_send, ERRNO);

/*
 * Read the peer's MPA frame, never an octet past it: FPDUs may follow in
 * the same stream. 1: complete, 0: need more, <0: error (cep->reason
 * says why if it was the frame).
 */
static int siw_cep_read_frame(struct siw_cep *cep, bool reply)
{
	for (;;) {
		u32 want = SIW_MPA_HDR_LEN;
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
		struct kvec kv;
		int rv;

		if (cep->have >= SIW_MPA_HDR_LEN)
			want += cep->peer.pd_len;
		if (cep->have == want)
			break;
		kv.iov_base = cep->frame + cep->have;
		kv.iov_len = want - cep->have;
		rv = kernel_recvmsg(cep->sock, &msg, &kv, 1, kv.iov_len,
				    MSG_DONTWAIT);
		if (rv == -EAGAIN)
			return 0;
		if (rv <= 0)
			return rv ? rv : -ECONNRESET;
		cep->have += rv;
		if (cep->have == SIW_MPA_HDR_LEN) {
			cep->reason = siw_mpa_parse_hdr(cep->frame, reply,
							&cep->peer);
			if (cep->reason)
				return -EPROTO;
		}
	}
	cep->reason = siw_mpa_parse_pd(&cep->peer, cep->frame + SIW_MPA_HDR_LEN,
				       cep->peer.pd_len);
	cep->frame_done = !cep->reason;
	return cep->reason ? -EPROTO : 1;
}

/* ------------------------------------------------------------------------
 * Closing.
 */

/*
 * How long a connection closed gracefully waits for the peer's FIN after
 * its own, as TCP's default tcp_fin_timeout; then it is reset.
 */
#define SIW_CEP_DRAIN_MS	60000

/*
 * At most this many connections drain at once (each holds its socket and
 * what TCP still has to send). A graceful close beyond them releases the
 * socket at once: TCP sends what it holds, unless the peer sends more.
 */
#define SIW_CEP_DRAIN_MAX	1024
static atomic_t siw_ceps_draining = ATOMIC_INIT(0);

/* Let go of the socket: @graceful, TCP sends what it holds; else a reset. */
static void siw_cep_sock_release(struct siw_cep *cep, bool graceful)
{
	siw_cep_sock_unhook(cep);
	if (!graceful)
		sock_no_linger(cep->sock->sk);
	sock_release(cep->sock);
	cep->sock = NULL;
}

/*
 * The end of a draining endpoint, under cep->mutex: out of the table (the
 * teardown walks no longer see it), the socket released, the table's
 * reference dropped at unlock.
 */
static void siw_cep_finish(struct siw_cep *cep, bool graceful)
{
	lockdep_assert_held(&cep->mutex);

	siw_cep_set_state(cep, SIW_CEP_CLOSED);
	del_timer_sync(&cep->timer);
	xa_erase(&siw_ceps, cep->id);
	siw_cep_sock_release(cep, graceful);
	atomic_dec(&siw_ceps_draining);
	cep->put_alive = true;
}

/*
 * The second half of a graceful close, once the QP and the owner are let
 * go: a half close. TCP sends what it holds and then our FIN; the socket
 * stays with the endpoint, which reads and drops what the peer still
 * sends (a consumer's last messages, in flight when it heard of our
 * close) until the peer's FIN and the ACK of ours end the connection
 * (TCP_CLOSE), or SIW_CEP_DRAIN_MS pass. Released at once, the socket
 * would answer such data, or any found unread, with a reset that drops
 * what it had not sent yet (RFC 1122, 4.2.2.13); and 6.1's tcp_close()
 * stops the retransmit timer of a socket without a reference on its
 * namespace, as ours are, so an orphan would stall at the first lost
 * segment. The data upcall drops what comes (siw_cep_sock_qp_off()), in
 * softirq as the engine's RX reads; the work item only hears of the end.
 * Until the connection ends the teardown walks still find the endpoint
 * (SIW_CEP_EV_GONE).
 */
static void siw_cep_drain_begin(struct siw_cep *cep)
{
	struct sock *sk = cep->sock->sk;

	lockdep_assert_held(&cep->mutex);

	siw_cep_arm(cep, SIW_CEP_DRAIN_MS);
	if (kernel_sock_shutdown(cep->sock, SHUT_WR)) {
		siw_cep_finish(cep, true);	/* not connected any more */
		return;
	}
	/* What came before the upcall dropped it: the engine left it. */
	lock_sock(sk);
	siw_cep_drop_rx(sk);
	release_sock(sk);
	if (READ_ONCE(sk->sk_state) == TCP_CLOSE)
		siw_cep_finish(cep, true);
}

/*
 * A draining endpoint's events. The connection's end (TCP_CLOSE: the
 * peer's FIN after ours was acknowledged, or a reset) finishes it; so
 * do, by reset, the bound and the end of its device or namespace. Its QP
 * let go of it: the QP's close or abort, raised on the way here (the move
 * to ERROR asks for one), is old news, and so are data and HUP events
 * before the end.
 */
static void siw_cep_on_drain(struct siw_cep *cep)
{
	unsigned long ev = xchg(&cep->events, 0);

	if (ev & BIT(SIW_CEP_EV_GONE)) {
		siw_cep_finish(cep, false);
	} else if (READ_ONCE(cep->sock->sk->sk_state) == TCP_CLOSE) {
		siw_cep_finish(cep, true);
	} else if (ev & BIT(SIW_CEP_EV_TIMEOUT)) {
		siw_cep_log(info_rl, cep,
			    "no FIN from the peer within %u ms of ours after a graceful close; reset\n",
			    SIW_CEP_DRAIN_MS);
		siw_cep_finish(cep, false);
	}
}

/*
 * Close under cep->mutex. The owner hears of it (its closed op; @status:
 * why a connection that was up went down) once the engine is gone and
 * the socket released or, @graceful for a connection that was up,
 * draining; and before the endpoint lets go of the QP.
 */
void siw_cep_close(struct siw_cep *cep, bool graceful, int status)
{
	enum siw_cep_state prev = cep->state;
	struct siw_qp *qp = cep->qp;
	unsigned long flags;
	bool drain;

	lockdep_assert_held(&cep->mutex);

	if (prev == SIW_CEP_CLOSED)
		return;
	if (prev == SIW_CEP_DRAINING) {
		/* A close while draining ends it: nobody waits any more. */
		siw_cep_finish(cep, false);
		return;
	}
	drain = graceful && prev == SIW_CEP_CONNECTED && cep->sock &&
		atomic_add_unless(&siw_ceps_draining, 1, SIW_CEP_DRAIN_MAX);
	siw_cep_set_state(cep, drain ? SIW_CEP_DRAINING : SIW_CEP_CLOSED);
	del_timer_sync(&cep->timer);
	if (drain)
		clear_bit(SIW_CEP_EV_TIMEOUT, &cep->events);	/* setup's */
	else
		xa_erase(&siw_ceps, cep->id);

	if (prev == SIW_CEP_CONNECTED) {
		/* The rings flush once the engine has flushed its WRs. */
		siw_qp_enter(qp, SIW_QP_ERROR);
	}
	if (cep->sock) {
		if (drain)
			siw_cep_sock_qp_off(cep);
		else
			siw_cep_sock_unhook(cep);
		if (prev == SIW_CEP_CONNECTED) {
			siw_engine_detach(qp);
			siw_qp_flush(qp);
		}
		if (!drain)
			siw_cep_sock_release(cep, graceful);
	}
	if (qp) {
		spin_lock_irqsave(&qp->state_lock, flags);
		if (qp->cep == cep)
			qp->cep = NULL;
		spin_unlock_irqrestore(&qp->state_lock, flags);
	}
	if (cep->ops->closed)
		cep->ops->closed(cep, prev == SIW_CEP_CONNECTED, status);
	if (qp) {
		siw_qp_put(qp);
		cep->qp = NULL;
	}
	siw_listener_unlink(cep);
	if (prev == SIW_CEP_CONNECTED)
		siw_cep_log(dbg, cep, "closed (%s)\n",
			    graceful ? "graceful" : "abort");
	if (drain)
		siw_cep_drain_begin(cep);
	else
		cep->put_alive = true;
}

/*
 * Count @s on the endpoint's device. An endpoint of the QP-connect
 * listener has none until its request names a QP: what happens to it
 * before (a refused request) belongs to no device.
 */
static void siw_cep_count(const struct siw_cep *cep, enum siw_stat s)
{
	if (cep->sdev)
		siw_stat_inc(cep->sdev, s);
}

/* The active side gives up: its owner hears @status and closes it. */
static void siw_cep_connect_failed(struct siw_cep *cep, int status)
{
	lockdep_assert_held(&cep->mutex);
	siw_cep_count(cep, SIW_STAT_CONN_FAILED);
	cep->ops->connect_failed(cep, status);
}

/*
 * Close @qp's connection. A graceful close asked first (the QP went to
 * SQD: rdma_disconnect(); or a Terminate went out or came in) stands
 * against the QP's own abort that follows it before the endpoint's work
 * ran (destroy_qp, a move to ERROR; rsockets' rclose() disconnects and
 * destroys at once): the reset would drop what TCP still holds, sent
 * before the disconnect. iw_cm leaves a connection that is closing alone
 * when its ID goes, as an RNIC does when the QP goes. "First" is this
 * thread's order; from two threads at once either may win. The aborts of
 * a namespace or device teardown do not come this way (they raise
 * SIW_CEP_EV_GONE themselves, siw_cm_abort_matching()), and a connection
 * that drains after its graceful close no longer hears the QP.
 */
void siw_cm_close(struct siw_qp *qp, bool graceful)
{
	struct siw_cep *cep;
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	cep = qp->cep;
	if (cep)
		kref_get(&cep->ref);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (!cep)
		return;
	if (graceful)
		siw_cep_event(cep, SIW_CEP_EV_CLOSE);
	else if (!test_bit(SIW_CEP_EV_CLOSE, &cep->events))
		siw_cep_event(cep, SIW_CEP_EV_ABORT);
	siw_cep_put(cep);
}

/*
 * Make @cep the endpoint of @qp, under the QP's state lock. A QP stops
 * (destroy_qp, or an error) by going to ERROR and then closing the
 * endpoint it has; one that took the QP after that close would hold it
 * for good, and destroy_qp would wait forever for its reference. So a QP
 * in ERROR takes no endpoint.
 */
static int siw_cep_bind_qp_locked(struct siw_cep *cep, struct siw_qp *qp)
{
	lockdep_assert_held(&qp->state_lock);
	if (qp->cep && qp->cep != cep)
		return -EBUSY;
	if (!siw_qp_can(qp, SIW_QP_TAKES_CEP))
		return -ECONNABORTED;
	qp->cep = cep;
	return 0;
}

/* ------------------------------------------------------------------------
 * Going live: hand the socket to the engine.
 */

void siw_cep_pull_rx(struct siw_cep *cep)
{
	struct siw_qp *qp = READ_ONCE(cep->data_qp);
	struct sock *sk = cep->sock->sk;

	if (!qp)
		return;
	lock_sock(sk);
	siw_rx_read_sock(qp, sk);
	release_sock(sk);
}

/* What the MPA exchange settled, for the QP's diagnostics. */
static void siw_cep_set_link(const struct siw_cep *cep, struct siw_qp_link *l)
{
	memcpy(&l->local_addr, &cep->laddr, sizeof(l->local_addr));
	l->mpa_rev = cep->res.rev;
	l->crc = cep->res.crc;
	l->markers_tx = cep->res.markers_tx;
	l->markers_rx = cep->res.markers_rx;
	l->rtr = cep->res.p2p ? cep->res.rtr : 0;
}

/*
 * Attach the engine. An iw_cm QP moves to RTS now; a QP connected without
 * iw_cm stays in RTR until its consumer moves it (siw_cep_ops.to_rts).
 */
int siw_cep_go_live(struct siw_cep *cep, u8 rtr_send, bool rtr_wait)
{
	struct siw_qp *qp = cep->qp;
	struct sock *sk = cep->sock->sk;
	struct siw_engine_params p = {
		.sock = cep->sock,
		.crc = cep->res.crc,
		.ird = cep->res.ird,
		.ord = cep->res.ord,
		.rtr_send = rtr_send,
		.rtr_wait = rtr_wait,
		.large = cep->res.large,
		.markers_tx = cep->res.markers_tx,
		.markers_rx = cep->res.markers_rx,
	};
	unsigned long flags;
	int err;

	lockdep_assert_held(&cep->mutex);

	spin_lock_irqsave(&qp->state_lock, flags);
	err = siw_cep_bind_qp_locked(cep, qp);
	if (!err) {
		qp->ird = siw_ird_cap(cep->res.ird);
		qp->ord = siw_ord_cap(cep->res.ord);
		memcpy(&qp->peer_addr, &cep->raddr, sizeof(qp->peer_addr));
		siw_cep_set_link(cep, &qp->link);
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (err) {
		siw_cep_log(dbg, cep, "QP %u stopped during setup\n",
			    siw_qp_num(qp));
		return err;
	}

	err = siw_engine_attach(qp, &p);
	if (err) {
		siw_cep_log(err, cep, "QP %u: no memory for its engine\n",
			    siw_qp_num(qp));
		return err;
	}
	write_lock_bh(&sk->sk_callback_lock);
	WRITE_ONCE(cep->data_qp, qp);
	write_unlock_bh(&sk->sk_callback_lock);

	err = cep->ops->to_rts ? siw_qp_connected(qp) : 0;
	if (err) {
		siw_cep_log(warn, cep, "QP %u left INIT/RTR during setup\n",
			    siw_qp_num(qp));
		write_lock_bh(&sk->sk_callback_lock);
		WRITE_ONCE(cep->data_qp, NULL);
		write_unlock_bh(&sk->sk_callback_lock);
		siw_engine_detach(qp);
		/*
		 * A move to ERROR that found the engine attached left the
		 * flush to the close, which an endpoint not yet connected
		 * does not do: WRs posted meanwhile (a drain's marker) wait.
		 */
		if (siw_qp_can(qp, SIW_QP_FLUSHES))
			siw_qp_flush(qp);
		return err;
	}
	siw_cep_set_state(cep, SIW_CEP_CONNECTED);
	del_timer(&cep->timer);
	siw_cep_count(cep, SIW_STAT_CONN_ESTABLISHED);
	siw_cep_log(dbg, cep, "QP %u up: MPA rev %u, CRC %s, IRD %u, ORD %u%s%s%s%s\n",
		    siw_qp_num(qp), cep->res.rev, cep->res.crc ? "on" : "off",
		    cep->res.ird, cep->res.ord, cep->res.p2p ? ", p2p" : "",
		    cep->res.large ? ", large FPDUs" : "",
		    cep->res.markers_tx ? ", markers to the peer" : "",
		    cep->res.markers_rx ? ", markers from the peer" : "");
	/*
	 * A FIN or a reset during the MPA exchange raised its HUP before
	 * there was a connection to end (REQUESTED leaves it to the
	 * consumer's answer; AWAIT_REPLY read the reply first). It ends the
	 * connection that is up now, after the consumer has heard of it.
	 */
	if (siw_sk_peer_gone(sk))
		siw_cep_event(cep, SIW_CEP_EV_HUP);
	return 0;
}

/* ------------------------------------------------------------------------
 * Active side.
 */

static void siw_cep_tcp_up(struct siw_cep *cep)
{
	int len, err;

	lockdep_assert_held(&cep->mutex);

	if (cep->sock->sk->sk_state != TCP_ESTABLISHED)
		return;
	kernel_getsockname(cep->sock, (struct sockaddr *)&cep->laddr);
	/* connect() built the request; cep->have is its length. */
	len = cep->have;
	cep->have = 0;
	err = siw_cep_send(cep, cep->frame, len);
	if (err) {
		siw_cep_log(err_rl, cep, "cannot send the MPA request: %d\n", err);
		siw_cep_connect_failed(cep, -ECONNRESET);
		return;
	}
	siw_cep_set_state(cep, SIW_CEP_AWAIT_REPLY);
	siw_cep_event(cep, SIW_CEP_EV_DATA);
}

/*
 * Why an MPA request may get no answer: a TCP socket that is no iWARP
 * listener, e.g. an iSCSI portal on the port whose iSER listener the
 * peer's port mapper moved elsewhere.
 */
static const char *siw_cep_no_reply_hint(const struct siw_cep *cep)
{
	return cep->pm_hint ? " (is an iWARP listener there?)" : "";
}

/* cm_iw.c's word on the port mapper ("; ..."), or nothing. */
static const char *siw_cep_pm_hint(const struct siw_cep *cep)
{
	return cep->pm_hint ?: "";
}

static void siw_cep_reply_in(struct siw_cep *cep)
{
	int rv = siw_cep_read_frame(cep, true);

	if (!rv)
		return;
	if (rv < 0) {
		if (rv == -EPROTO)
			siw_cep_log(err_rl, cep, "bad MPA reply: %s\n",
				    siw_mpa_reason_str(cep->reason));
		else
			siw_cep_log(info_rl, cep, "peer closed before its MPA reply%s%s\n",
				    siw_cep_no_reply_hint(cep), siw_cep_pm_hint(cep));
		siw_cep_connect_failed(cep, -ECONNRESET);
		return;
	}
	siw_mpa_negotiate_rep(&cep->pol, &cep->req, &cep->peer, &cep->res);
	if (cep->res.reason == SIW_MPA_E_REJECTED) {
		siw_cep_count(cep, SIW_STAT_MPA_REJECTS_RECV);
		siw_cep_connect_failed(cep, cep->ops->rejected(cep));
		return;
	}
	if (cep->res.reason) {
		siw_cep_log(err_rl, cep, "MPA reply not acceptable: %s\n",
			    siw_mpa_reason_str(cep->res.reason));
		siw_cep_connect_failed(cep, -ECONNRESET);
		return;
	}
	if (siw_cep_go_live(cep, cep->res.p2p ? cep->res.rtr : 0, false)) {
		siw_cep_connect_failed(cep, -ECONNRESET);
		return;
	}
	cep->ops->connected(cep);
	siw_cep_pull_rx(cep);
}

/* The private data of the peer's MPA frame (cep->peer.ulp_pd_len). */
u8 *siw_cep_peer_pd(struct siw_cep *cep)
{
	return cep->frame + SIW_MPA_HDR_LEN + cep->peer.ulp_pd_off;
}

/*
 * A new active endpoint of @ops' kind for @qp (referenced; the endpoint
 * takes the reference, or drops it if there is none), locked. Its owner
 * completes it (cep->pol, what it holds) and calls siw_cep_dial().
 */
struct siw_cep *siw_cep_active(struct siw_device *sdev, struct siw_qp *qp,
			       const struct siw_cep_ops *ops)
{
	struct siw_cep *cep = siw_cep_alloc(sdev, ops);

	if (!cep) {
		siw_qp_put(qp);
		return NULL;
	}
	cep->qp = qp;
	return cep;
}

/*
 * Connect @cep from @laddr to @raddr, offering @pd under cep->pol. The
 * outcome reaches the owner through its connected or connect_failed op;
 * a return other than 0 means neither will come (@cep is closed then).
 */
int siw_cep_dial(struct siw_cep *cep, const struct sockaddr_storage *laddr,
		 const struct sockaddr_storage *raddr, const void *pd,
		 u16 pd_len)
{
	struct siw_qp *qp = cep->qp;
	struct socket *sock;
	unsigned long flags;
	int len, err;

	lockdep_assert_held(&cep->mutex);
	memcpy(&cep->laddr, laddr, sizeof(cep->laddr));
	memcpy(&cep->raddr, raddr, sizeof(cep->raddr));

	siw_mpa_request_info(&cep->pol, &cep->req);
	len = siw_mpa_build(cep->frame, sizeof(cep->frame), &cep->req, pd,
			    pd_len);
	if (len < 0) {
		err = -EINVAL;
		goto fail;
	}
	cep->have = len;	/* sent once TCP is up */

	err = sock_create_kern(dev_net(cep->sdev->netdev), raddr->ss_family,
			       SOCK_STREAM, IPPROTO_TCP, &sock);
	if (err)
		goto fail;
	sock_set_reuseaddr(sock->sk);
	err = kernel_bind(sock, (struct sockaddr *)laddr, siw_addr_len(laddr));
	if (err == -EADDRINUSE && cep->laddr_mapped) {
		/* iwpmd's reservation of the port (portmap.c). */
		siw_pm_share_port(sock->sk);
		err = kernel_bind(sock, (struct sockaddr *)laddr,
				  siw_addr_len(laddr));
		if (err)
			sock_set_reuseaddr(sock->sk);
	}
	if (err == -EADDRINUSE) {
		/* The CM's port is taken in TCP's port space: any will do. */
		struct sockaddr_storage any = *laddr;

		((struct sockaddr_in *)&any)->sin_port = 0;
		err = kernel_bind(sock, (struct sockaddr *)&any,
				  siw_addr_len(&any));
	}
	if (err) {
		sock_release(sock);
		goto fail;
	}
	siw_cep_sock_hook(cep, sock);

	spin_lock_irqsave(&qp->state_lock, flags);
	err = siw_cep_bind_qp_locked(cep, qp);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (err)
		goto fail;

	siw_cep_set_state(cep, SIW_CEP_CONNECTING);
	siw_cep_arm(cep, siw_cm_mpa_timeout_ms());
	siw_cep_count(cep, SIW_STAT_CONN_ATTEMPTS);
	err = kernel_connect(sock, (struct sockaddr *)raddr, siw_addr_len(raddr),
			     O_NONBLOCK);
	if (err && err != -EINPROGRESS) {
		siw_cep_log(dbg, cep, "TCP connect failed: %d\n", err);
		siw_cep_count(cep, SIW_STAT_CONN_FAILED);
		goto fail;
	}
	if (!err)
		siw_cep_event(cep, SIW_CEP_EV_CONNECTED);
	return 0;

fail:
	siw_cep_close(cep, false, err);
	return err;
}

/* ------------------------------------------------------------------------
 * Passive side.
 */

/* Answer the peer's MPA request with a reject carrying @pd. */
void siw_cep_refuse(struct siw_cep *cep, const void *pd, u8 pd_len)
{
	struct siw_mpa_info rep;
	int len;

	siw_mpa_reply_info(&cep->pol, &cep->res, true, &rep);
	len = siw_mpa_build(cep->frame, sizeof(cep->frame), &rep, pd, pd_len);
	if (len > 0 && !siw_cep_send(cep, cep->frame, len))
		siw_cep_count(cep, SIW_STAT_MPA_REJECTS_SENT);
}

/*
 * Accept the peer's MPA request under cep->pol: negotiate and send the
 * reply carrying @pd. The owner then takes the QP live.
 */
int siw_cep_answer(struct siw_cep *cep, const void *pd, u16 pd_len)
{
	struct siw_mpa_info rep;
	int len, err;

	lockdep_assert_held(&cep->mutex);
	siw_mpa_negotiate_req(&cep->pol, &cep->peer, &cep->res);
	siw_mpa_reply_info(&cep->pol, &cep->res, false, &rep);
	len = siw_mpa_build(cep->frame, sizeof(cep->frame), &rep, pd, pd_len);
	if (len < 0)
		return -EINVAL;
	err = siw_cep_send(cep, cep->frame, len);
	if (!err)
		siw_cep_count(cep, SIW_STAT_CONN_ACCEPTED);
	return err;
}

static void siw_cep_request_in(struct siw_cep *cep)
{
	struct siw_listener *l = cep->listener;
	int rv;

	lockdep_assert_held(&cep->mutex);

	rv = siw_cep_read_frame(cep, false);
	if (!rv)
		return;
	/* Until it is answered, it keeps its room in the listener. */
	if (rv < 0) {
		if (rv == -EPROTO) {
			siw_cep_log(err_rl, cep, "bad MPA request: %s\n",
				    siw_mpa_reason_str(cep->reason));
			if (siw_mpa_reason_reply(cep->reason)) {
				cep->res.reason = cep->reason;
				siw_cep_refuse(cep, NULL, 0);
			}
		}
		siw_cep_close(cep, true, 0);
		return;
	}
	siw_cm_policy(&cep->pol, SIW_MAX_IRD, SIW_MAX_ORD, true);
	siw_mpa_negotiate_req(&cep->pol, &cep->peer, &cep->res);
	if (cep->res.reason) {
		siw_cep_log(err_rl, cep, "MPA request not acceptable: %s\n",
			    siw_mpa_reason_str(cep->res.reason));
		if (siw_mpa_reason_reply(cep->res.reason))
			siw_cep_refuse(cep, NULL, 0);
		siw_cep_close(cep, true, 0);
		return;
	}
	if (siw_listener_closing(l)) {
		siw_cep_close(cep, false, 0);
		return;
	}
	cep->ops->request(cep);
}

/* ------------------------------------------------------------------------
 * The endpoint's work item.
 */

static void siw_cep_on_timeout(struct siw_cep *cep)
{
	switch (cep->state) {
	case SIW_CEP_CONNECTING:
	case SIW_CEP_AWAIT_REPLY:
		siw_cep_log(err_rl, cep, "%s timed out after %u ms%s%s\n",
			    cep->state == SIW_CEP_CONNECTING ? "TCP connect" :
			    "waiting for the MPA reply",
			    siw_cm_mpa_timeout_ms(),
			    cep->state == SIW_CEP_CONNECTING ? "" :
			    siw_cep_no_reply_hint(cep),
			    cep->state == SIW_CEP_CONNECTING ? "" :
			    siw_cep_pm_hint(cep));
		siw_cep_connect_failed(cep, -ETIMEDOUT);
		break;
	case SIW_CEP_AWAIT_REQUEST:
		siw_cep_log(warn_rl, cep, "no MPA request within %u ms, closed\n",
			    siw_cm_mpa_timeout_ms());
		siw_cep_close(cep, false, 0);
		break;
	case SIW_CEP_REQUESTED:
		siw_cep_log(warn_rl, cep,
			    "connection request neither accepted nor rejected within %u ms, dropped\n",
			    siw_cm_accept_timeout_ms());
		siw_cep_close(cep, false, 0);
		break;
	default:
		break;
	}
}

static void siw_cep_on_hup(struct siw_cep *cep)
{
	int err = sock_error(cep->sock->sk);

	switch (cep->state) {
	case SIW_CEP_CONNECTING:
		siw_cep_log(info_rl, cep, "TCP connect failed: %d%s%s\n", err,
			    err == -ECONNREFUSED && cep->pm_hint ?
			    " (nothing listens there)" : "",
			    err == -ECONNREFUSED ? siw_cep_pm_hint(cep) : "");
		siw_cep_connect_failed(cep, err == -ECONNREFUSED ?
					    -ECONNREFUSED : -EHOSTUNREACH);
		break;
	case SIW_CEP_AWAIT_REPLY:
		siw_cep_reply_in(cep);	/* a reject may precede the FIN */
		if (cep->state == SIW_CEP_AWAIT_REPLY) {
			siw_cep_log(info_rl, cep, "peer closed before its MPA reply%s%s\n",
				    siw_cep_no_reply_hint(cep), siw_cep_pm_hint(cep));
			siw_cep_connect_failed(cep, -ECONNRESET);
		}
		break;
	case SIW_CEP_CONNECTED:
		siw_cep_pull_rx(cep);
		/*
		 * A FIN is how a peer disconnects; a reset or a failed
		 * connection (no Terminate first) is worth a line.
		 */
		if (err && cep->state == SIW_CEP_CONNECTED)
			siw_cep_log(info_rl, cep, "QP %u lost its connection: %s (%d)\n",
				    siw_qp_num(cep->qp),
				    err == -ECONNRESET ? "reset by the peer" :
				    "TCP error", err);
		if (cep->ops->peer_gone && cep->state == SIW_CEP_CONNECTED)
			cep->ops->peer_gone(cep);
		siw_cep_close(cep, !err, err ? -ECONNRESET : 0);
		break;
	case SIW_CEP_REQUESTED:
		break;	/* siw_cep_go_live() raises it again */
	default:
		siw_cep_close(cep, false, 0);
		break;
	}
}

static void siw_cep_on_data(struct siw_cep *cep)
{
	switch (cep->state) {
	case SIW_CEP_AWAIT_REPLY:
		siw_cep_reply_in(cep);
		break;
	case SIW_CEP_AWAIT_REQUEST:
		siw_cep_request_in(cep);
		break;
	case SIW_CEP_CONNECTED:
		siw_cep_pull_rx(cep);
		break;
	default:
		break;
	}
}

static void siw_cep_work(struct work_struct *work)
{
	struct siw_cep *cep = container_of(work, struct siw_cep, work);

	mutex_lock(&cep->mutex);
	while (cep->state != SIW_CEP_CLOSED && cep->events) {
		bool abort;

		if (cep->state == SIW_CEP_DRAINING) {
			siw_cep_on_drain(cep);
			continue;
		}
		abort = test_and_clear_bit(SIW_CEP_EV_ABORT, &cep->events);
		abort |= test_and_clear_bit(SIW_CEP_EV_GONE, &cep->events);

		if (test_and_clear_bit(SIW_CEP_EV_CLOSE, &cep->events) ||
		    abort) {
			/*
			 * A consumer that gives up on a connection whose
			 * MPA request got no answer (an iSCSI login's
			 * timeout is shorter than ours) is told nothing
			 * more: the log says what the wait was for.
			 */
			if (cep->state == SIW_CEP_AWAIT_REPLY)
				siw_cep_log(info_rl, cep,
					    "given up (by its consumer, or the device went) while waiting for the MPA reply%s%s\n",
					    siw_cep_no_reply_hint(cep),
					    siw_cep_pm_hint(cep));
			if (cep->state == SIW_CEP_CONNECTING ||
			    cep->state == SIW_CEP_AWAIT_REPLY)
				siw_cep_connect_failed(cep, -ECONNRESET);
			else
				siw_cep_close(cep, !abort, 0);
		} else if (test_and_clear_bit(SIW_CEP_EV_UNLISTEN,
					      &cep->events)) {
			/* A reported request waits for its answer. */
			if (cep->state == SIW_CEP_AWAIT_REQUEST)
				siw_cep_close(cep, false, 0);
		} else if (test_and_clear_bit(SIW_CEP_EV_CONNECTED,
					      &cep->events)) {
			if (cep->state == SIW_CEP_CONNECTING)
				siw_cep_tcp_up(cep);
		} else if (test_and_clear_bit(SIW_CEP_EV_DATA, &cep->events)) {
			siw_cep_on_data(cep);
		} else if (test_and_clear_bit(SIW_CEP_EV_HUP, &cep->events)) {
			siw_cep_on_hup(cep);
		} else if (test_and_clear_bit(SIW_CEP_EV_TIMEOUT,
					      &cep->events)) {
			siw_cep_on_timeout(cep);
		}
	}
	siw_cep_unlock(cep);
	siw_cep_put(cep);
}

/*
 * Abort every endpoint @gone() picks and wait until their work has run:
 * the one walk for the two owners that end endpoints from outside, a
 * device and a network namespace.
 */
static void siw_cm_abort_matching(bool (*gone)(struct siw_cep *cep,
					       const void *owner),
				  const void *owner)
{
	struct siw_cep *cep;
	unsigned long id;

	xa_lock(&siw_ceps);
	xa_for_each(&siw_ceps, id, cep) {
		if (gone(cep, owner))
			siw_cep_event(cep, SIW_CEP_EV_GONE);
	}
	xa_unlock(&siw_ceps);
	flush_workqueue(siw_cm_wq);
}

static bool siw_cep_of_device(struct siw_cep *cep, const void *sdev)
{
	return cep->sdev == sdev;
}

void siw_cm_device_gone(struct siw_device *sdev)
{
	siw_cm_abort_matching(siw_cep_of_device, sdev);
}

static bool siw_cep_in_net(struct siw_cep *cep, const void *net)
{
	return READ_ONCE(cep->net) == net;
}

/*
 * A kernel socket holds no reference on its network namespace, so every
 * endpoint socket in @net must be released before the namespace goes:
 * those of the QP-connect listener that still wait for their MPA request
 * belong to no device, and siw_cm_device_gone() does not see them.
 */
void siw_cm_net_gone(struct net *net)
{
	siw_cm_abort_matching(siw_cep_in_net, net);
}

/*
 * One endpoint work item at a time, in the order they were queued: the
 * connections a peer opens one after the other reach iw_cm as connection
 * requests in that same order, and each side sends its MPA request or
 * reply in the order TCP came up. Applications pair the connections they
 * open with the requests the other side accepts by that order (perftest
 * -q N does); with work items running side by side a later request could
 * overtake an earlier one, and they would pair the wrong QPs. No work
 * item waits for another one on this queue.
 */
int siw_cm_module_init(void)
{
	siw_cm_wq = alloc_ordered_workqueue("siw_cm", WQ_MEM_RECLAIM);
	return siw_cm_wq ? 0 : -ENOMEM;
}

void siw_cm_module_exit(void)
{
	destroy_workqueue(siw_cm_wq);
	WARN_ON(!xa_empty(&siw_ceps));
}
