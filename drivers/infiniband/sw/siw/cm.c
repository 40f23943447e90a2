// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The iw_cm provider: TCP connections and the MPA exchange on them.
 *
 * A connection endpoint (struct siw_cep) lives from connect() or from the
 * TCP accept until the connection is closed:
 *
 *	active:  CONNECTING -> AWAIT_REPLY -> CONNECTED -> CLOSED
 *	passive: AWAIT_REQUEST -> REQUESTED -> CONNECTED -> CLOSED
 *
 * Socket upcalls and the setup timer only set an event bit and queue the
 * endpoint's work item; the work item (and the accept/reject verbs) do
 * the I/O under the endpoint's mutex. Once CONNECTED, the socket's data
 * and write space upcalls go straight to the engine of the QP.
 *
 * Listeners (cm_listen.c) create the passive endpoints.
 *
 * iw_cm sees: one CONNECT_REPLY after connect(); CONNECT_REQUEST on the
 * listener; ESTABLISHED after accept(); DISCONNECT and CLOSE once a
 * connection that was up goes down. Addresses are the CM's mapped ones
 * (m_local_addr, m_remote_addr): what is on the wire.
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
#include <rdma/iw_cm.h>

#include "cm.h"
#include "cm_cep.h"
#include "engine.h"
#include "qp.h"
#include "qp_connect.h"
#include "siw.h"
#include "proto/mpa.h"

static uint mpa_crc = SIW_MPA_CRC_PEER;
module_param(mpa_crc, uint, 0644);
MODULE_PARM_DESC(mpa_crc,
		 "MPA CRC32C: 0 never, 1 if the peer asks for it (default), 2 always");

static uint mpa_rev = SIW_MPA_REV_2;
module_param(mpa_rev, uint, 0644);
MODULE_PARM_DESC(mpa_rev, "MPA revision to request: 1 or 2 (default 2)");

static bool mpa_p2p;
module_param(mpa_p2p, bool, 0644);
MODULE_PARM_DESC(mpa_p2p,
		 "Ask for MPA peer-to-peer mode with a ready-to-receive message (default off)");

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

struct workqueue_struct *siw_cm_wq;

/*
 * Endpoints by id: iw_cm's handle of a connection request. Ids go round
 * all 32 bits before one is used again, so that a handle iw_cm kept past
 * its endpoint's end finds nothing rather than a newer connection.
 */
static DEFINE_XARRAY_ALLOC1(siw_ceps);
static u32 siw_cep_next_id;

static void siw_cm_policy(struct siw_mpa_policy *pol, u16 ird, u16 ord,
			  bool p2p)
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
}

/* ------------------------------------------------------------------------
 * Endpoint life.
 */

static void siw_cep_release(struct kref *ref)
{
	kfree(container_of(ref, struct siw_cep, ref));
}

static void siw_cep_put(struct siw_cep *cep)
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

/* A new endpoint; the table holds the reference returned. */
struct siw_cep *siw_cep_alloc(struct siw_device *sdev)
{
	struct siw_cep *cep = kzalloc(sizeof(*cep), GFP_KERNEL);

	if (!cep)
		return NULL;
	kref_init(&cep->ref);
	cep->sdev = sdev;
	mutex_init(&cep->mutex);
	INIT_WORK(&cep->work, siw_cep_work);
	timer_setup(&cep->timer, siw_cep_timeout, 0);
	INIT_LIST_HEAD(&cep->lnode);
	if (xa_alloc_cyclic(&siw_ceps, &cep->id, cep, xa_limit_32b,
			    &siw_cep_next_id, GFP_KERNEL) < 0) {
		kfree(cep);
		return NULL;
	}
	return cep;
}

ALLOW_ERROR_INJECTION(siw_cep_alloc, NULL);

static struct siw_cep *siw_cep_lookup(u32 id)
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

static noinline int siw_cep_send(struct siw_cep *cep, const void *buf,
				 size_t len)
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
 * Talking to iw_cm.
 */

/* iw_cm refuses an event only when it has no room for it (-ENOMEM). */
static int siw_cep_upcall(struct siw_cep *cep, struct iw_cm_id *id,
			  enum iw_cm_event_type type, int status)
{
	struct iw_cm_event ev = {
		.event = type,
		.status = status,
	};
	const struct siw_mpa_info *mi = &cep->peer;

	memcpy(&ev.local_addr, &cep->laddr, sizeof(ev.local_addr));
	memcpy(&ev.remote_addr, &cep->raddr, sizeof(ev.remote_addr));
	if ((type == IW_CM_EVENT_CONNECT_REQUEST ||
	     type == IW_CM_EVENT_CONNECT_REPLY) && cep->frame_done &&
	    mi->ulp_pd_len) {
		ev.private_data = cep->frame + SIW_MPA_HDR_LEN + mi->ulp_pd_off;
		ev.private_data_len = min_t(u16, mi->ulp_pd_len, U8_MAX);
	}
	if (type == IW_CM_EVENT_CONNECT_REQUEST) {
		ev.provider_data = (void *)(uintptr_t)cep->id;
		/* The peer's IRD bounds our ORD, its ORD our IRD. */
		ev.ird = mi->v2 ? siw_ord_cap(mi->ird) : SIW_MAX_ORD;
		ev.ord = mi->v2 ? siw_ird_cap(mi->ord) : SIW_MAX_IRD;
	} else {
		ev.ird = cep->res.ird;
		ev.ord = cep->res.ord;
	}
	return id->event_handler(id, &ev);
}

/* ------------------------------------------------------------------------
 * Closing.
 */

/*
 * Close under cep->mutex. A connection that was up goes down with
 * DISCONNECT (@status) and CLOSE; before that nothing is reported here.
 */
void siw_cep_close(struct siw_cep *cep, bool graceful, int status)
{
	enum siw_cep_state prev = cep->state;
	struct siw_qp *qp = cep->qp;
	unsigned long flags;

	lockdep_assert_held(&cep->mutex);

	if (prev == SIW_CEP_CLOSED)
		return;
	cep->state = SIW_CEP_CLOSED;
	del_timer_sync(&cep->timer);
	xa_erase(&siw_ceps, cep->id);

	if (prev == SIW_CEP_CONNECTED) {
		/* The rings flush once the engine has flushed its WRs. */
		siw_qp_enter(qp, SIW_QP_ERROR);
	}
	if (cep->sock) {
		siw_cep_sock_unhook(cep);
		if (prev == SIW_CEP_CONNECTED) {
			siw_engine_detach(qp);
			siw_qp_flush(qp);
		}
		if (!graceful)
			sock_no_linger(cep->sock->sk);
		sock_release(cep->sock);
		cep->sock = NULL;
	}
	if (qp) {
		spin_lock_irqsave(&qp->state_lock, flags);
		if (qp->cep == cep)
			qp->cep = NULL;
		spin_unlock_irqrestore(&qp->state_lock, flags);
	}
	if (cep->cm_id) {
		if (prev == SIW_CEP_CONNECTED) {
			siw_cep_upcall(cep, cep->cm_id, IW_CM_EVENT_DISCONNECT,
				       status);
			siw_cep_upcall(cep, cep->cm_id, IW_CM_EVENT_CLOSE, 0);
		}
		cep->cm_id->rem_ref(cep->cm_id);
		cep->cm_id = NULL;
	}
	if (qp) {
		siw_qp_put(qp);
		cep->qp = NULL;
	}
	siw_listener_unlink(cep);
	cep->put_alive = true;
	if (prev == SIW_CEP_CONNECTED)
		siw_cep_log(dbg, cep, "closed (%s)\n",
			    graceful ? "graceful" : "abort");
}

/*
 * The active side gives up: one CONNECT_REPLY with @status, then close.
 * A QP connecting without iw_cm hears after the close, so that it can
 * try again at once.
 */
static void siw_cep_connect_failed(struct siw_cep *cep, int status)
{
	struct siw_qp *qp = cep->qp;

	lockdep_assert_held(&cep->mutex);

	if (cep->cm_id) {
		siw_cep_upcall(cep, cep->cm_id, IW_CM_EVENT_CONNECT_REPLY,
			       status);
		siw_cep_close(cep, false, status);
		return;
	}
	siw_qp_get(qp);
	siw_cep_close(cep, false, status);
	siw_qpc_done(qp, status);
	siw_qp_put(qp);
}

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
	siw_cep_event(cep, graceful ? SIW_CEP_EV_CLOSE : SIW_CEP_EV_ABORT);
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

static void siw_cep_pull_rx(struct siw_cep *cep)
{
	struct siw_qp *qp = READ_ONCE(cep->data_qp);
	struct sock *sk = cep->sock->sk;

	if (!qp)
		return;
	lock_sock(sk);
	siw_rx_read_sock(qp, sk);
	release_sock(sk);
}

/*
 * Attach the engine. With @to_rts the QP moves to RTS now (iw_cm); a QP
 * connected without iw_cm stays in RTR until its consumer moves it.
 */
static int siw_cep_go_live(struct siw_cep *cep, u8 rtr_send, bool rtr_wait,
			   bool to_rts)
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

	err = to_rts ? siw_qp_connected(qp) : 0;
	if (err) {
		siw_cep_log(warn, cep, "QP %u left INIT/RTR during setup\n",
			    siw_qp_num(qp));
		write_lock_bh(&sk->sk_callback_lock);
		WRITE_ONCE(cep->data_qp, NULL);
		write_unlock_bh(&sk->sk_callback_lock);
		siw_engine_detach(qp);
		return err;
	}
	cep->state = SIW_CEP_CONNECTED;
	del_timer(&cep->timer);
	siw_cep_log(dbg, cep, "QP %u up: MPA rev %u, CRC %s, IRD %u, ORD %u%s\n",
		    siw_qp_num(qp), cep->res.rev, cep->res.crc ? "on" : "off",
		    cep->res.ird, cep->res.ord, cep->res.p2p ? ", p2p" : "");
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
		siw_cep_log(err, cep, "cannot send the MPA request: %d\n", err);
		siw_cep_connect_failed(cep, -ECONNRESET);
		return;
	}
	cep->state = SIW_CEP_AWAIT_REPLY;
	siw_cep_event(cep, SIW_CEP_EV_DATA);
}

static void siw_cep_reply_in(struct siw_cep *cep)
{
	int rv = siw_cep_read_frame(cep, true);

	if (!rv)
		return;
	if (rv < 0) {
		if (rv == -EPROTO)
			siw_cep_log(err, cep, "bad MPA reply: %s\n",
				    siw_mpa_reason_str(cep->reason));
		else
			siw_cep_log(info, cep, "peer closed during MPA setup\n");
		siw_cep_connect_failed(cep, -ECONNRESET);
		return;
	}
	siw_mpa_negotiate_rep(&cep->pol, &cep->req, &cep->peer, &cep->res);
	if (cep->res.reason == SIW_MPA_E_REJECTED) {
		if (cep->cm_id) {
			siw_cep_log(info, cep, "peer rejected the connection\n");
			siw_cep_connect_failed(cep, -ECONNREFUSED);
		} else {
			const u8 *pd = cep->frame + SIW_MPA_HDR_LEN +
				       cep->peer.ulp_pd_off;

			siw_cep_connect_failed(cep,
					       siw_qpc_reply_status(cep->qp, pd,
								    cep->peer.ulp_pd_len));
		}
		return;
	}
	if (cep->res.reason) {
		siw_cep_log(err, cep, "MPA reply not acceptable: %s\n",
			    siw_mpa_reason_str(cep->res.reason));
		siw_cep_connect_failed(cep, -ECONNRESET);
		return;
	}
	if (siw_cep_go_live(cep, cep->res.p2p ? cep->res.rtr : 0, false,
			    cep->cm_id)) {
		siw_cep_connect_failed(cep, -ECONNRESET);
		return;
	}
	if (cep->cm_id)
		siw_cep_upcall(cep, cep->cm_id, IW_CM_EVENT_CONNECT_REPLY, 0);
	else
		siw_qpc_done(cep->qp, 0);
	siw_cep_pull_rx(cep);
}

/*
 * Start connecting @qp (referenced; the endpoint takes the reference) from
 * @laddr to @raddr, offering @pd. @id is iw_cm's, or NULL for a QP that
 * connects without it. The outcome arrives as CONNECT_REPLY or through
 * siw_qpc_done(); a return other than 0 means neither will come.
 */
static int siw_cep_start(struct siw_device *sdev, struct siw_qp *qp,
			 struct iw_cm_id *id,
			 const struct sockaddr_storage *laddr,
			 const struct sockaddr_storage *raddr,
			 const void *pd, u16 pd_len, u16 ird, u16 ord)
{
	struct siw_cep *cep;
	struct socket *sock;
	unsigned long flags;
	int len, err;

	cep = siw_cep_alloc(sdev);
	if (!cep) {
		siw_qp_put(qp);
		return -ENOMEM;
	}
	mutex_lock(&cep->mutex);
	cep->qp = qp;
	memcpy(&cep->laddr, laddr, sizeof(cep->laddr));
	memcpy(&cep->raddr, raddr, sizeof(cep->raddr));

	siw_cm_policy(&cep->pol, ird, ord, id && READ_ONCE(mpa_p2p));
	if (!id)
		cep->pol.rev = SIW_MPA_REV_2;
	siw_mpa_request_info(&cep->pol, &cep->req);
	len = siw_mpa_build(cep->frame, sizeof(cep->frame), &cep->req, pd,
			    pd_len);
	if (len < 0) {
		err = -EINVAL;
		goto fail;
	}
	cep->have = len;	/* sent once TCP is up */

	err = sock_create_kern(dev_net(sdev->netdev), raddr->ss_family,
			       SOCK_STREAM, IPPROTO_TCP, &sock);
	if (err)
		goto fail;
	sock_set_reuseaddr(sock->sk);
	err = kernel_bind(sock, (struct sockaddr *)laddr, siw_addr_len(laddr));
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

	if (id) {
		cep->cm_id = id;
		id->add_ref(id);
	}
	cep->state = SIW_CEP_CONNECTING;
	siw_cep_arm(cep, siw_cm_mpa_timeout_ms());
	err = kernel_connect(sock, (struct sockaddr *)raddr, siw_addr_len(raddr),
			     O_NONBLOCK);
	if (err && err != -EINPROGRESS) {
		siw_cep_log(dbg, cep, "TCP connect failed: %d\n", err);
		if (id) {
			id->rem_ref(id);
			cep->cm_id = NULL;
		}
		goto fail;
	}
	if (!err)
		siw_cep_event(cep, SIW_CEP_EV_CONNECTED);
	siw_cep_unlock(cep);
	return 0;

fail:
	siw_cep_close(cep, false, err);
	siw_cep_unlock(cep);
	return err;
}

static int siw_cm_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	struct siw_device *sdev = to_siw_device(id->device);
	struct sockaddr_storage *laddr = &id->m_local_addr;
	struct sockaddr_storage *raddr = &id->m_remote_addr;
	struct siw_qp *qp;

	if (laddr->ss_family != raddr->ss_family ||
	    (raddr->ss_family != AF_INET && raddr->ss_family != AF_INET6))
		return -EAFNOSUPPORT;
	if (param->private_data_len > SIW_MPA_MAX_PD - SIW_MPA_V2_LEN)
		return -EINVAL;
	qp = siw_qp_get_for_cm(sdev, param->qpn);
	if (!qp)
		return -EINVAL;
	siw_qp_connect_access(qp);
	return siw_cep_start(sdev, qp, id, laddr, raddr, param->private_data,
			     param->private_data_len, param->ird, param->ord);
}

int siw_cm_qpc_connect(struct siw_qp *qp, const struct sockaddr_storage *local,
		       const struct sockaddr_storage *peer, const void *pd,
		       u16 pd_len)
{
	siw_qp_get(qp);
	/* The consumer sets its ORD only at RTS: ask for what we can. */
	return siw_cep_start(qp->sdev, qp, NULL, local, peer, pd, pd_len,
			     qp->ird, SIW_MAX_ORD);
}

/* ------------------------------------------------------------------------
 * Passive side.
 */

static void siw_cep_refuse(struct siw_cep *cep, const void *pd, u8 pd_len)
{
	struct siw_mpa_info rep;
	int len;

	siw_mpa_reply_info(&cep->pol, &cep->res, true, &rep);
	len = siw_mpa_build(cep->frame, sizeof(cep->frame), &rep, pd, pd_len);
	if (len > 0)
		siw_cep_send(cep, cep->frame, len);
}

/* A request on qp_connect.c's listener: its QP accepts or refuses. */
static void siw_cep_qpc_request(struct siw_cep *cep)
{
	u8 reply[SIW_MPA_V2_LEN + 32];
	struct siw_mpa_info rep;
	struct siw_qp *qp;
	int len, err;

	qp = siw_qpc_accept(sock_net(cep->sock->sk), &cep->laddr, &cep->raddr,
			    cep->frame + SIW_MPA_HDR_LEN + cep->peer.ulp_pd_off,
			    cep->peer.ulp_pd_len, reply);
	if (!qp) {
		siw_cep_refuse(cep, reply, siw_qpc_pd_len());
		siw_cep_close(cep, true, 0);
		return;
	}
	cep->sdev = qp->sdev;
	cep->qp = qp;
	/* The consumer sets its ORD only at RTS: offer what we can. */
	siw_cm_policy(&cep->pol, qp->ird, SIW_MAX_ORD, true);
	siw_mpa_negotiate_req(&cep->pol, &cep->peer, &cep->res);
	siw_mpa_reply_info(&cep->pol, &cep->res, false, &rep);
	len = siw_mpa_build(cep->frame, sizeof(cep->frame), &rep, reply,
			    siw_qpc_pd_len());
	err = len < 0 ? -EINVAL : siw_cep_send(cep, cep->frame, len);
	if (!err)
		err = siw_cep_go_live(cep, 0, cep->res.p2p, false);
	if (err) {
		siw_cep_close(cep, false, 0);
		return;
	}
	siw_listener_unlink(cep);
	siw_qpc_done(qp, 0);
	siw_cep_pull_rx(cep);
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
			siw_cep_log(err, cep, "bad MPA request: %s\n",
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
		siw_cep_log(err, cep, "MPA request not acceptable: %s\n",
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
	if (siw_listener_is_qpc(l)) {
		siw_cep_qpc_request(cep);
		return;
	}
	cep->state = SIW_CEP_REQUESTED;
	siw_cep_arm(cep, READ_ONCE(mpa_accept_timeout_ms));
	if (!siw_cep_upcall(cep, siw_listener_cm_id(l),
			    IW_CM_EVENT_CONNECT_REQUEST, 0))
		return;
	/*
	 * The listener's backlog is full: iw_cm dropped the request and
	 * leaves the answer to us. Refuse it now rather than let the peer
	 * wait for a reply that never comes.
	 */
	siw_cep_log(warn_rl, cep,
		    "listen backlog full, connection request refused\n");
	siw_cep_refuse(cep, NULL, 0);
	siw_cep_close(cep, true, 0);
}

static struct siw_cep *siw_cep_of(struct iw_cm_id *id)
{
	return siw_cep_lookup((u32)(uintptr_t)id->provider_data);
}

static bool siw_addr_same(const struct sockaddr_storage *a,
			  const struct sockaddr_storage *b)
{
	return a->ss_family == b->ss_family &&
	       !memcmp(a, b, siw_addr_len(a));
}

/*
 * Is @cep the request iw_cm's @id stands for? The endpoint id it holds
 * names it, and iw_cm gave @id the wire addresses of the request it was
 * made for: a stale @id never passes for a newer connection. Under
 * cep->mutex.
 */
static bool siw_cep_requested_by(struct siw_cep *cep, struct iw_cm_id *id)
{
	lockdep_assert_held(&cep->mutex);
	return cep->state == SIW_CEP_REQUESTED &&
	       siw_addr_same(&id->m_local_addr, &cep->laddr) &&
	       siw_addr_same(&id->m_remote_addr, &cep->raddr);
}

/*
 * A consumer may accept a request it accepted already (rping -P does, from
 * two threads) before iw_cm has handled our ESTABLISHED. Refused, iw_cm
 * would take it for a failed accept, forget the connection while
 * ESTABLISHED is on its way and stop on a BUG_ON when it arrives. So the
 * second accept succeeds and changes nothing here. iw_cm has swapped in
 * the QP it names, with a reference, and dropped its pointer to the QP it
 * held without dropping that reference: drop it for iw_cm.
 */
static void siw_cm_accept_again(struct siw_cep *cep, u32 qpn)
{
	struct siw_qp *qp = siw_qp_get_for_cm(cep->sdev, qpn);

	siw_cep_log(info, cep, "accepted once more (QP %u): ignored\n", qpn);
	if (cep->iw_qp)
		siw_qp_put(cep->iw_qp);
	/* iw_cm's new reference keeps it. */
	cep->iw_qp = qp;
	if (qp)
		siw_qp_put(qp);
}

static int siw_cm_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	struct siw_device *sdev = to_siw_device(id->device);
	struct siw_cep *cep = siw_cep_of(id);
	struct siw_mpa_info rep;
	struct siw_qp *qp = NULL;
	int len, err;

	if (!cep)
		return -ECONNRESET;
	mutex_lock(&cep->mutex);
	err = 0;
	if (cep->accepted_by == id) {
		siw_cm_accept_again(cep, param->qpn);
		goto out;
	}
	err = -ECONNRESET;
	if (!siw_cep_requested_by(cep, id))
		goto out;
	err = -EINVAL;
	if (param->private_data_len > SIW_MPA_MAX_PD - SIW_MPA_V2_LEN)
		goto out;
	qp = siw_qp_get_for_cm(sdev, param->qpn);
	if (!qp)
		goto out;
	if (!siw_qp_can(qp, SIW_QP_TAKES_CONNECTION)) {
		siw_qp_put(qp);
		goto out;
	}
	cep->qp = qp;

	siw_cm_policy(&cep->pol, param->ird, param->ord, true);
	siw_mpa_negotiate_req(&cep->pol, &cep->peer, &cep->res);
	siw_mpa_reply_info(&cep->pol, &cep->res, false, &rep);
	len = siw_mpa_build(cep->frame, sizeof(cep->frame), &rep,
			    param->private_data, param->private_data_len);
	err = len < 0 ? -EINVAL : siw_cep_send(cep, cep->frame, len);
	if (err) {
		siw_cep_close(cep, false, 0);
		goto out;
	}
	cep->cm_id = id;
	id->add_ref(id);
	err = siw_cep_go_live(cep, 0, cep->res.p2p, true);
	if (err) {
		siw_cep_close(cep, false, 0);
		goto out;
	}
	siw_listener_unlink(cep);
	cep->accepted_by = id;
	cep->iw_qp = qp;
	siw_cep_upcall(cep, id, IW_CM_EVENT_ESTABLISHED, 0);
	siw_cep_pull_rx(cep);
out:
	siw_cep_unlock(cep);
	siw_cep_put(cep);
	return err;
}

static int siw_cm_reject(struct iw_cm_id *id, const void *pd, u8 pd_len)
{
	struct siw_cep *cep = siw_cep_of(id);

	if (!cep)
		return -ECONNRESET;
	mutex_lock(&cep->mutex);
	if (siw_cep_requested_by(cep, id)) {
		siw_cep_log(dbg, cep, "rejected by the consumer\n");
		siw_cep_refuse(cep, pd, pd_len);
		siw_cep_close(cep, true, 0);
	}
	siw_cep_unlock(cep);
	siw_cep_put(cep);
	return 0;
}

/* ------------------------------------------------------------------------
 * The endpoint's work item.
 */

static void siw_cep_on_timeout(struct siw_cep *cep)
{
	switch (cep->state) {
	case SIW_CEP_CONNECTING:
	case SIW_CEP_AWAIT_REPLY:
		siw_cep_log(err, cep, "%s timed out after %u ms\n",
			    cep->state == SIW_CEP_CONNECTING ? "TCP connect" :
			    "waiting for the MPA reply",
			    siw_cm_mpa_timeout_ms());
		siw_cep_connect_failed(cep, -ETIMEDOUT);
		break;
	case SIW_CEP_AWAIT_REQUEST:
		siw_cep_log(warn, cep, "no MPA request within %u ms, closed\n",
			    siw_cm_mpa_timeout_ms());
		siw_cep_close(cep, false, 0);
		break;
	case SIW_CEP_REQUESTED:
		siw_cep_log(warn, cep,
			    "connection request neither accepted nor rejected within %u ms, dropped\n",
			    READ_ONCE(mpa_accept_timeout_ms));
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
		siw_cep_log(info, cep, "TCP connect failed: %d\n", err);
		siw_cep_connect_failed(cep, err == -ECONNREFUSED ?
					    -ECONNREFUSED : -EHOSTUNREACH);
		break;
	case SIW_CEP_AWAIT_REPLY:
		siw_cep_reply_in(cep);	/* a reject may precede the FIN */
		if (cep->state == SIW_CEP_AWAIT_REPLY) {
			siw_cep_log(info, cep, "peer closed during MPA setup\n");
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
			siw_cep_log(info, cep, "QP %u lost its connection: %s (%d)\n",
				    siw_qp_num(cep->qp),
				    err == -ECONNRESET ? "reset by the peer" :
				    "TCP error", err);
		/* Without iw_cm, the QP's consumer hears it from the QP. */
		if (!cep->cm_id && cep->state == SIW_CEP_CONNECTED)
			siw_qp_async_event(cep->qp, IB_EVENT_QP_FATAL);
		siw_cep_close(cep, !err, err ? -ECONNRESET : 0);
		break;
	case SIW_CEP_REQUESTED:
		break;	/* accept will find out */
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
		bool abort = test_and_clear_bit(SIW_CEP_EV_ABORT, &cep->events);

		if (test_and_clear_bit(SIW_CEP_EV_CLOSE, &cep->events) ||
		    abort) {
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
 * iw_cm finds a QP with get_qp and takes its reference with add_ref right
 * after. A QP found without a reference could be destroyed in between, so
 * get_qp takes the reference and hands it over: the add_ref that follows
 * takes that one instead of a new one (iw_handoff counts them).
 */
static struct ib_qp *siw_cm_get_qp(struct ib_device *base, int qpn)
{
	struct siw_qp *qp = siw_qp_get_for_cm(to_siw_device(base), qpn);

	if (!qp)
		return NULL;
	atomic_inc(&qp->iw_handoff);
	return &qp->base;
}

static void siw_cm_add_ref(struct ib_qp *base)
{
	struct siw_qp *qp = to_siw_qp(base);

	if (!atomic_add_unless(&qp->iw_handoff, -1, 0))
		siw_qp_get(qp);
}

static void siw_cm_rem_ref(struct ib_qp *base)
{
	siw_qp_put(to_siw_qp(base));
}

const struct ib_device_ops siw_cm_ops = {
	.iw_accept = siw_cm_accept,
	.iw_add_ref = siw_cm_add_ref,
	.iw_connect = siw_cm_connect,
	.iw_create_listen = siw_cm_create_listen,
	.iw_destroy_listen = siw_cm_destroy_listen,
	.iw_get_qp = siw_cm_get_qp,
	.iw_reject = siw_cm_reject,
	.iw_rem_ref = siw_cm_rem_ref,
};

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
			siw_cep_event(cep, SIW_CEP_EV_ABORT);
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
