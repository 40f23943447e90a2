// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Connecting QPs without rdma_cm, for consumers that exchange QP numbers
 * and GIDs out of band and move their QPs to RTR and RTS themselves
 * (ibv_rc_pingpong, perftest without -R). siw to siw only.
 *
 * modify_qp to RTR with an address vector (sgid_index naming one of our
 * address GIDs, dgid the peer's) and dest_qp_num records the peer. Of the
 * two QPs, the one with the lower (IP address, QP number) connects; the
 * other accepts. Connecting runs in the background from RTR on: the
 * active side connects a TCP socket to the peer's siw QP port (module
 * parameter qp_port, default 19591) and retries while the peer is not
 * ready yet; the passive side waits for it. modify_qp to RTS returns at
 * once (ibv_rc_pingpong's server moves to RTS before it tells the client
 * its QP number): send WRs wait for the connection. After
 * qp_connect_timeout_ms without one, or if the peer refuses, the QP goes
 * to ERROR with IB_EVENT_QP_FATAL and its WRs are flushed.
 *
 * On the wire it is a normal MPA revision 2 exchange whose private data
 * names the two QPs (struct siw_qpc_pd), then DDP/RDMAP as always. A
 * listener in each network namespace (made when the first QP there
 * expects a connection) accepts only a request for a QP that is in RTR and
 * expects exactly that peer address and QP number on the address the
 * connection came to; anything else is rejected with a status saying why.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/workqueue.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "cm.h"
#include "cm_cep.h"
#include "qp.h"
#include "qp_connect.h"
#include "siw.h"

static ushort qp_port = 19591;
module_param(qp_port, ushort, 0444);
MODULE_PARM_DESC(qp_port,
		 "TCP port of QP connections made without rdma_cm (default 19591)");

static uint qp_connect_timeout_ms = 10000;
module_param(qp_connect_timeout_ms, uint, 0644);
MODULE_PARM_DESC(qp_connect_timeout_ms,
		 "How long a QP connection made without rdma_cm may take from RTR on (default 10000)");

/* Pause between attempts while the peer is not ready. */
#define SIW_QPC_RETRY_MS	100

#define SIW_QPC_MAGIC		"SIWQ"
#define SIW_QPC_VERSION		1

/* MPA private data of a QP connection, request and reply. */
struct siw_qpc_pd {
	u8 magic[4];
	u8 version;
	u8 status;		/* reply: enum siw_qpc_status */
	__be16 rsvd;
	__be32 src_qpn;		/* the sender's QP */
	__be32 dst_qpn;		/* the receiver's QP */
} __packed;

enum siw_qpc_status {
	SIW_QPC_OK,
	SIW_QPC_NO_QP,		/* no such QP on that address */
	SIW_QPC_NOT_READY,	/* the QP is not in RTR (yet) */
	SIW_QPC_WRONG_PEER,	/* it expects another peer or QP */
	SIW_QPC_BUSY,		/* it is connected already */
	SIW_QPC_BAD_REQUEST,
};

static const char * const siw_qpc_status_str[] = {
	[SIW_QPC_OK] = "accepted",
	[SIW_QPC_NO_QP] = "no such QP",
	[SIW_QPC_NOT_READY] = "QP not in RTR",
	[SIW_QPC_WRONG_PEER] = "QP expects another peer",
	[SIW_QPC_BUSY] = "QP already connected",
	[SIW_QPC_BAD_REQUEST] = "malformed request",
};

static void siw_qpc_build_pd(struct siw_qpc_pd *pd, u8 status, u32 src,
			     u32 dst)
{
	memset(pd, 0, sizeof(*pd));
	memcpy(pd->magic, SIW_QPC_MAGIC, sizeof(pd->magic));
	pd->version = SIW_QPC_VERSION;
	pd->status = status;
	pd->src_qpn = cpu_to_be32(src);
	pd->dst_qpn = cpu_to_be32(dst);
}

static bool siw_qpc_parse_pd(const void *buf, u16 len, struct siw_qpc_pd *pd)
{
	if (len < sizeof(*pd))
		return false;
	memcpy(pd, buf, sizeof(*pd));
	return !memcmp(pd->magic, SIW_QPC_MAGIC, sizeof(pd->magic)) &&
	       pd->version == SIW_QPC_VERSION;
}

/* ------------------------------------------------------------------------
 * One listener per network namespace.
 */

static const struct siw_cep_ops siw_qpc_cep_ops;
static void siw_qpc_done(struct siw_qp *qp, int status);
static int siw_qpc_dial(struct siw_qp *qp, const struct sockaddr_storage *local,
			const struct sockaddr_storage *peer,
			const struct siw_qpc_pd *pd);
static unsigned int siw_qpc_net_id;
static DEFINE_MUTEX(siw_qpc_listen_mutex);

struct siw_qpc_net {
	struct siw_listener *listener;
};

static int siw_qpc_listen(struct net *net)
{
	struct siw_qpc_net *qn = net_generic(net, siw_qpc_net_id);
	struct siw_listener *l;
	int err = 0;

	mutex_lock(&siw_qpc_listen_mutex);
	if (!qn->listener) {
		l = siw_cm_listen_port(net, qp_port, &siw_qpc_cep_ops);
		if (IS_ERR(l))
			err = PTR_ERR(l);
		else
			qn->listener = l;
	}
	mutex_unlock(&siw_qpc_listen_mutex);
	if (err)
		pr_err_ratelimited("cannot listen for QP connections on port %u: %d\n",
				   qp_port, err);
	return err;
}

static void __net_exit siw_qpc_net_exit(struct net *net)
{
	struct siw_qpc_net *qn = net_generic(net, siw_qpc_net_id);

	/* 1. No new connection: the listening sockets go. */
	mutex_lock(&siw_qpc_listen_mutex);
	if (qn->listener)
		siw_cm_unlisten(qn->listener);
	qn->listener = NULL;
	mutex_unlock(&siw_qpc_listen_mutex);
	/* 2. The connections it took, and any other socket of siw there. */
	siw_cm_net_gone(net);
}

static struct pernet_operations siw_qpc_net_ops = {
	.exit = siw_qpc_net_exit,
	.id = &siw_qpc_net_id,
	.size = sizeof(struct siw_qpc_net),
};

int siw_qpc_module_init(void)
{
	return register_pernet_subsys(&siw_qpc_net_ops);
}

void siw_qpc_module_exit(void)
{
	unregister_pernet_subsys(&siw_qpc_net_ops);
}

/* ------------------------------------------------------------------------
 * The verbs' side: RTR records the peer, RTS connects.
 */

static int siw_addr_cmp(const struct sockaddr_storage *a,
			const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return a->ss_family < b->ss_family ? -1 : 1;
	if (a->ss_family == AF_INET)
		return memcmp(&((struct sockaddr_in *)a)->sin_addr,
			      &((struct sockaddr_in *)b)->sin_addr,
			      sizeof(struct in_addr));
	return memcmp(&((struct sockaddr_in6 *)a)->sin6_addr,
		      &((struct sockaddr_in6 *)b)->sin6_addr,
		      sizeof(struct in6_addr));
}

static void siw_addr_set_port(struct sockaddr_storage *a, u16 port)
{
	/* sin_port and sin6_port share their offset. */
	((struct sockaddr_in *)a)->sin_port = htons(port);
}

/*
 * The peer's answer to our request said no for good (its QP expects
 * another peer, has one, or found the request malformed), or it is not
 * siw's. Not -ECONNREFUSED: that is TCP's word for a port nobody listens
 * on yet, which is worth another try.
 */
#define SIW_QPC_E_REFUSED	(-EREMOTEIO)

static bool siw_qpc_retryable(int status)
{
	return status == -EAGAIN || status == -ECONNREFUSED ||
	       status == -EHOSTUNREACH || status == -ECONNRESET ||
	       status == -ETIMEDOUT;
}

/* Still connecting: armed, in RTR or RTS, no result yet. */
static bool siw_qpc_pending(struct siw_qp *qp)
{
	lockdep_assert_held(&qp->qpc.lock);
	return siw_qp_can(qp, SIW_QP_QPC_CONNECTS) &&
	       qp->qpc.status == -EINPROGRESS;
}

/* The peer's address and QP number, for a log line. */
static u32 siw_qpc_peer(struct siw_qp *qp, struct sockaddr_storage *peer)
{
	unsigned long flags;
	u32 qpn;

	spin_lock_irqsave(&qp->qpc.lock, flags);
	*peer = qp->qpc.peer;
	qpn = qp->qpc.peer_qpn;
	spin_unlock_irqrestore(&qp->qpc.lock, flags);
	return qpn;
}

/* @err: the error that ended the last attempt, 0 if none says more. */
static void siw_qpc_give_up(struct siw_qp *qp, const char *why, int err)
{
	struct sockaddr_storage peer;
	u32 peer_qpn = siw_qpc_peer(qp, &peer);

	if (err)
		siw_qp_err(qp, "no connection to %pISpc QP %u: %s (error %d)\n",
			   &peer, peer_qpn, why, err);
	else
		siw_qp_err(qp, "no connection to %pISpc QP %u: %s\n", &peer,
			   peer_qpn, why);
	siw_qp_fail(qp, IB_EVENT_QP_FATAL);
}

/* What the work item does next, decided under the lock. */
enum siw_qpc_step {
	SIW_QPC_IDLE,		/* nothing (stopped, connected, attempting) */
	SIW_QPC_WAIT,		/* the passive side: watch the deadline */
	SIW_QPC_ATTEMPT,	/* the active side: connect */
	SIW_QPC_TOO_LATE,	/* the deadline passed */
};

static enum siw_qpc_step siw_qpc_next_step(struct siw_qp *qp)
{
	struct siw_qpc *qpc = &qp->qpc;

	lockdep_assert_held(&qpc->lock);
	if (!siw_qpc_pending(qp) || qpc->attempt)
		return SIW_QPC_IDLE;
	if (time_after_eq(jiffies, qpc->deadline))
		return SIW_QPC_TOO_LATE;
	if (!qpc->active) {
		queue_delayed_work(system_unbound_wq, &qpc->work,
				   qpc->deadline - jiffies);
		return SIW_QPC_WAIT;
	}
	qpc->attempt = true;
	return SIW_QPC_ATTEMPT;
}

/*
 * The active side tries to connect until the deadline; the passive side
 * only watches the deadline.
 */
static void siw_qpc_work(struct work_struct *work)
{
	struct siw_qp *qp = container_of(to_delayed_work(work), struct siw_qp,
					 qpc.work);
	struct siw_qpc *qpc = &qp->qpc;
	struct sockaddr_storage local, peer;
	enum siw_qpc_step step;
	struct siw_qpc_pd pd;
	unsigned long flags;
	bool active;
	int err;

	spin_lock_irqsave(&qpc->lock, flags);
	step = siw_qpc_next_step(qp);
	active = qpc->active;
	local = qpc->local;
	peer = qpc->peer;
	siw_qpc_build_pd(&pd, 0, siw_qp_num(qp), qpc->peer_qpn);
	spin_unlock_irqrestore(&qpc->lock, flags);

	if (step == SIW_QPC_TOO_LATE) {
		siw_qpc_give_up(qp, active ? "the peer did not accept in time" :
				"the peer did not connect in time", 0);
	} else if (step == SIW_QPC_ATTEMPT) {
		err = siw_qpc_dial(qp, &local, &peer, &pd);
		if (err)
			siw_qpc_done(qp, err);
	}
}

void siw_qpc_init(struct siw_qp *qp)
{
	spin_lock_init(&qp->qpc.lock);
	INIT_DELAYED_WORK(&qp->qpc.work, siw_qpc_work);
}

void siw_qpc_disarm(struct siw_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->qpc.lock, flags);
	WRITE_ONCE(qp->qpc.armed, false);
	spin_unlock_irqrestore(&qp->qpc.lock, flags);
}

/*
 * Disarmed under the lock, nothing queues the work again (the work item,
 * siw_qpc_start() and siw_qpc_done() queue it only while pending): once
 * cancelled, it stays so.
 */
void siw_qpc_stop(struct siw_qp *qp)
{
	siw_qpc_disarm(qp);
	cancel_delayed_work_sync(&qp->qpc.work);
}

int siw_qpc_rtr(struct siw_qp *qp, const struct ib_qp_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(&attr->ah_attr);
	struct siw_qpc *qpc = &qp->qpc;
	struct sockaddr_storage local, peer;
	unsigned long flags;
	int cmp, err;
	bool active;

	if (!(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH)) {
		siw_qp_dbg(qp, "RTR: an address vector without a GID cannot be connected\n");
		return -EINVAL;
	}
	err = siw_gid_addr(qp->sdev, grh->sgid_index, &local);
	if (err) {
		siw_qp_dbg(qp, "RTR: source GID %u holds no IP address; use a GID index above 0\n",
			   grh->sgid_index);
		return err;
	}
	if (!siw_gid_to_addr(qp->sdev, &grh->dgid, &peer) ||
	    peer.ss_family != local.ss_family) {
		siw_qp_dbg(qp, "RTR: destination GID %pI6 is no usable IP address\n",
			   grh->dgid.raw);
		return -EINVAL;
	}
	cmp = siw_addr_cmp(&local, &peer);
	if (!cmp && attr->dest_qp_num == siw_qp_num(qp))
		return -EINVAL;
	if (siw_qpc_armed(qp))
		return 0;	/* RTR again: the first one counts */

	/* Both sides listen: the rule picks the side per pair of QPs. */
	err = siw_qpc_listen(dev_net(qp->sdev->netdev));
	if (err)
		return err;
	siw_addr_set_port(&peer, qp_port);
	spin_lock_irqsave(&qpc->lock, flags);
	if (!qpc->armed) {
		qpc->local = local;
		qpc->peer = peer;
		qpc->peer_qpn = attr->dest_qp_num;
		qpc->active = cmp < 0 ||
			      (!cmp && siw_qp_num(qp) < attr->dest_qp_num);
		qpc->deadline = jiffies +
			msecs_to_jiffies(READ_ONCE(qp_connect_timeout_ms));
		qpc->attempt = false;
		qpc->status = -EINPROGRESS;
		WRITE_ONCE(qpc->armed, true);
	}
	active = qpc->active;
	spin_unlock_irqrestore(&qpc->lock, flags);
	siw_qp_dbg(qp, "RTR: peer %pISc QP %u, this side %s\n", &peer,
		   attr->dest_qp_num, active ? "connects" : "accepts");
	return 0;
}

/*
 * The QP is in RTR now: start connecting (or watching the deadline). Not
 * from siw_qpc_rtr(): the work item gives up on a QP not yet in RTR.
 */
void siw_qpc_start(struct siw_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->qpc.lock, flags);
	if (siw_qpc_pending(qp))
		queue_delayed_work(system_unbound_wq, &qp->qpc.work, 0);
	spin_unlock_irqrestore(&qp->qpc.lock, flags);
}

/* An attempt ended: connected (0), or why not. Any context. */
static void siw_qpc_done(struct siw_qp *qp, int status)
{
	struct siw_qpc *qpc = &qp->qpc;
	bool pending, retry = false;
	unsigned long flags;

	spin_lock_irqsave(&qpc->lock, flags);
	qpc->attempt = false;
	pending = siw_qpc_pending(qp);
	if (!status) {
		qpc->status = 0;
	} else if (pending && siw_qpc_retryable(status)) {
		queue_delayed_work(system_unbound_wq, &qpc->work,
				   msecs_to_jiffies(SIW_QPC_RETRY_MS));
		retry = true;
	}
	spin_unlock_irqrestore(&qpc->lock, flags);

	if (!status) {
		struct sockaddr_storage peer;
		u32 peer_qpn = siw_qpc_peer(qp, &peer);

		siw_qp_dbg(qp, "connected to %pISpc QP %u\n", &peer, peer_qpn);
		/* RTS may have come first: what waited goes now. */
		siw_qp_sq_kick(qp);
	} else if (pending && !retry) {
		if (status == SIW_QPC_E_REFUSED)
			siw_qpc_give_up(qp, "the peer refused it", 0);
		else
			siw_qpc_give_up(qp, "the attempt failed here", status);
	}
}

/* Without the lock: a hint (see struct siw_qpc). */
bool siw_qpc_armed(struct siw_qp *qp)
{
	return READ_ONCE(qp->qpc.armed);
}

/*
 * The reply's verdict on our request: 0, -EAGAIN (retry) or
 * SIW_QPC_E_REFUSED. A peer can refuse as often as we ask: rate limited.
 */
static int siw_qpc_reply_status(struct siw_qp *qp, const void *buf, u16 len)
{
	struct sockaddr_storage peer;
	struct siw_qpc_pd pd;
	bool ours = siw_qpc_parse_pd(buf, len, &pd);
	u32 peer_qpn;

	if (ours && pd.status == SIW_QPC_OK)
		return 0;
	if (ours && (pd.status == SIW_QPC_NOT_READY ||
		     pd.status == SIW_QPC_NO_QP))
		return -EAGAIN;
	peer_qpn = siw_qpc_peer(qp, &peer);
	if (!ours)
		siw_qp_err_rl(qp,
			      "peer %pISpc does not connect QPs without rdma_cm (not a siw peer?)\n",
			      &peer);
	else
		siw_qp_err_rl(qp, "peer %pISpc refused the connection to QP %u: %s\n",
			      &peer, peer_qpn,
			      pd.status < ARRAY_SIZE(siw_qpc_status_str) ?
			      siw_qpc_status_str[pd.status] : "unknown reason");
	return SIW_QPC_E_REFUSED;
}

/* ------------------------------------------------------------------------
 * The listener's side.
 */

static struct ib_device *siw_qpc_device_of(struct net *net,
					   const struct sockaddr_storage *a)
{
	struct net_device *ndev = NULL;
	struct ib_device *base = NULL;

	if (a->ss_family == AF_INET) {
		ndev = ip_dev_find(net, ((struct sockaddr_in *)a)->sin_addr.s_addr);
	} else if (IS_ENABLED(CONFIG_IPV6)) {
		rcu_read_lock();
		ndev = ipv6_dev_find(net, &((struct sockaddr_in6 *)a)->sin6_addr,
				     NULL);
		if (ndev)
			dev_hold(ndev);
		rcu_read_unlock();
	}
	if (ndev) {
		base = ib_device_get_by_netdev(ndev, RDMA_DRIVER_SIW);
		dev_put(ndev);
	}
	return base;
}

/* Does @qp expect the request @pd from @peer to @local? */
static u8 siw_qpc_check_request(struct siw_qp *qp,
				const struct sockaddr_storage *local,
				const struct sockaddr_storage *peer,
				const struct siw_qpc_pd *pd)
{
	struct siw_qpc *qpc = &qp->qpc;
	unsigned long flags;
	u8 status;

	spin_lock_irqsave(&qpc->lock, flags);
	if (!siw_qp_can(qp, SIW_QP_QPC_CONNECTS))
		status = SIW_QPC_NOT_READY;
	else if (qpc->peer_qpn != be32_to_cpu(pd->src_qpn) ||
		 siw_addr_cmp(&qpc->peer, peer) ||
		 siw_addr_cmp(&qpc->local, local))
		status = SIW_QPC_WRONG_PEER;
	else if (qpc->status != -EINPROGRESS || READ_ONCE(qp->cep))
		status = SIW_QPC_BUSY;
	else
		status = SIW_QPC_OK;
	spin_unlock_irqrestore(&qpc->lock, flags);
	return status;
}

/*
 * A request came to @local from @peer: the QP it names, referenced, if
 * that QP expects exactly this connection. Else NULL and *@status.
 */
static struct siw_qp *siw_qpc_match(struct net *net,
				    const struct sockaddr_storage *local,
				    const struct sockaddr_storage *peer,
				    const struct siw_qpc_pd *pd, u8 *status)
{
	u32 dst = be32_to_cpu(pd->dst_qpn);
	struct ib_device *base;
	struct siw_qp *qp;

	base = siw_qpc_device_of(net, local);
	if (!base) {
		*status = SIW_QPC_NO_QP;
		return NULL;
	}
	qp = siw_qp_get_by_num(to_siw_device(base), dst);
	ib_device_put(base);
	if (!qp) {
		*status = SIW_QPC_NO_QP;
		return NULL;
	}
	*status = siw_qpc_check_request(qp, local, peer, pd);
	if (*status == SIW_QPC_OK)
		return qp;
	siw_qp_put(qp);
	return NULL;
}

static struct siw_qp *siw_qpc_accept(struct net *net,
				     const struct sockaddr_storage *local,
				     const struct sockaddr_storage *peer,
				     const void *buf, u16 len,
				     struct siw_qpc_pd *reply)
{
	struct siw_qpc_pd pd;
	struct siw_qp *qp = NULL;
	u8 status = SIW_QPC_BAD_REQUEST;
	u32 src = 0, dst = 0;

	/* A request that is not one names no QPs: the reply names none. */
	if (siw_qpc_parse_pd(buf, len, &pd)) {
		src = be32_to_cpu(pd.src_qpn);
		dst = be32_to_cpu(pd.dst_qpn);
		qp = siw_qpc_match(net, local, peer, &pd, &status);
	}
	if (!qp)
		pr_debug("QP connection from %pISpc to %pISc: %s\n", peer,
			 local, siw_qpc_status_str[status]);
	siw_qpc_build_pd(reply, status, dst, src);
	return qp;
}

/* ------------------------------------------------------------------------
 * Our kind of CM endpoint (cm_cep.h).
 */

/*
 * One attempt from @local to @peer with the request @pd. A QP that
 * connects without iw_cm asks for MPA revision 2 and no RTR (both ends
 * are siw), and for as much ORD as we can: its consumer sets it only at
 * RTS.
 */
static int siw_qpc_dial(struct siw_qp *qp, const struct sockaddr_storage *local,
			const struct sockaddr_storage *peer,
			const struct siw_qpc_pd *pd)
{
	struct siw_cep *cep;
	int err;

	siw_qp_get(qp);
	cep = siw_cep_active(qp->sdev, qp, &siw_qpc_cep_ops);
	if (!cep)
		return -ENOMEM;
	siw_cm_policy(&cep->pol, qp->ird, SIW_MAX_ORD, false);
	cep->pol.rev = SIW_MPA_REV_2;
	err = siw_cep_dial(cep, local, peer, pd, sizeof(*pd));
	siw_cep_unlock(cep);
	return err;
}

static void siw_qpc_cep_connected(struct siw_cep *cep)
{
	siw_qpc_done(cep->qp, 0);
}

/* The QP hears after the close, so that it can try again at once. */
static void siw_qpc_cep_failed(struct siw_cep *cep, int status)
{
	struct siw_qp *qp = cep->qp;

	siw_qp_get(qp);
	siw_cep_close(cep, false, status);
	siw_qpc_done(qp, status);
	siw_qp_put(qp);
}

static int siw_qpc_cep_rejected(struct siw_cep *cep)
{
	return siw_qpc_reply_status(cep->qp, siw_cep_peer_pd(cep),
				    cep->peer.ulp_pd_len);
}

/* A request on our listener: the QP it names accepts, or it is refused. */
static void siw_qpc_cep_request(struct siw_cep *cep)
{
	struct siw_qpc_pd reply;
	struct siw_qp *qp;
	int err;

	qp = siw_qpc_accept(sock_net(cep->sock->sk), &cep->laddr, &cep->raddr,
			    siw_cep_peer_pd(cep), cep->peer.ulp_pd_len, &reply);
	if (!qp) {
		siw_cep_refuse(cep, &reply, sizeof(reply));
		siw_cep_close(cep, true, 0);
		return;
	}
	cep->sdev = qp->sdev;
	cep->qp = qp;
	/* The consumer sets its ORD only at RTS: offer what we can. */
	siw_cm_policy(&cep->pol, qp->ird, SIW_MAX_ORD, true);
	err = siw_cep_answer(cep, &reply, sizeof(reply));
	if (!err)
		err = siw_cep_go_live(cep, 0, cep->res.p2p);
	if (err) {
		siw_cep_close(cep, false, 0);
		return;
	}
	siw_listener_unlink(cep);
	siw_qpc_done(qp, 0);
	siw_cep_pull_rx(cep);
}

/* Without iw_cm, the QP's consumer hears it from the QP. */
static void siw_qpc_cep_peer_gone(struct siw_cep *cep)
{
	siw_qp_async_event(cep->qp, IB_EVENT_QP_FATAL);
}

static const struct siw_cep_ops siw_qpc_cep_ops = {
	.to_rts = false,
	.connected = siw_qpc_cep_connected,
	.connect_failed = siw_qpc_cep_failed,
	.rejected = siw_qpc_cep_rejected,
	.request = siw_qpc_cep_request,
	.peer_gone = siw_qpc_cep_peer_gone,
};
