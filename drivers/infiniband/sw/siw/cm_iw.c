// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The iw_cm provider verbs (connect, accept, reject, the QP references)
 * and iw_cm's kind of endpoint: what iw_cm hears of a connection.
 *
 * iw_cm sees: one CONNECT_REPLY after connect(); CONNECT_REQUEST on the
 * listener; ESTABLISHED after accept(); DISCONNECT and CLOSE once a
 * connection that was up goes down. Addresses are the CM's mapped ones
 * (m_local_addr, m_remote_addr): what is on the wire. The endpoint
 * itself (TCP, the MPA exchange, closing) is cm.c's.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <rdma/iw_cm.h>

#include "cm.h"
#include "cm_cep.h"
#include "portmap.h"
#include "qp.h"
#include "siw.h"
#include "proto/mpa.h"

static bool mpa_p2p;
module_param(mpa_p2p, bool, 0644);
MODULE_PARM_DESC(mpa_p2p,
		 "Ask for MPA peer-to-peer mode with a ready-to-receive message (default off)");

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
		ev.private_data = siw_cep_peer_pd(cep);
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
 * The endpoint ops (cm_cep.h).
 */

static void siw_iw_connected(struct siw_cep *cep)
{
	siw_cep_upcall(cep, cep->cm_id, IW_CM_EVENT_CONNECT_REPLY, 0);
}

/* One CONNECT_REPLY with @status, then close. */
static void siw_iw_connect_failed(struct siw_cep *cep, int status)
{
	siw_cep_upcall(cep, cep->cm_id, IW_CM_EVENT_CONNECT_REPLY, status);
	siw_cep_close(cep, false, status);
}

static int siw_iw_rejected(struct siw_cep *cep)
{
	siw_cep_log(info_rl, cep, "peer rejected the connection\n");
	return -ECONNREFUSED;
}

/* A request on an iw_cm listener: the consumer accepts or rejects it. */
static void siw_iw_request(struct siw_cep *cep)
{
	siw_cep_set_state(cep, SIW_CEP_REQUESTED);
	siw_cep_arm(cep, siw_cm_accept_timeout_ms());
	if (!siw_cep_upcall(cep, siw_listener_cm_id(cep->listener),
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

/* A connection that was up goes down with DISCONNECT and CLOSE. */
static void siw_iw_closed(struct siw_cep *cep, bool was_up, int status)
{
	struct iw_cm_id *id = cep->cm_id;

	if (!id)
		return;
	if (was_up) {
		siw_cep_upcall(cep, id, IW_CM_EVENT_DISCONNECT, status);
		siw_cep_upcall(cep, id, IW_CM_EVENT_CLOSE, 0);
	}
	cep->cm_id = NULL;
	id->rem_ref(id);
}

const struct siw_cep_ops siw_cep_iw_ops = {
	.to_rts = true,
	.connected = siw_iw_connected,
	.connect_failed = siw_iw_connect_failed,
	.rejected = siw_iw_rejected,
	.request = siw_iw_request,
	.closed = siw_iw_closed,
};

/* ------------------------------------------------------------------------
 * The verbs.
 */

static int siw_cm_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	struct siw_device *sdev = to_siw_device(id->device);
	struct sockaddr_storage *laddr = &id->m_local_addr;
	struct sockaddr_storage *raddr = &id->m_remote_addr;
	struct siw_cep *cep;
	struct siw_qp *qp;
	int err;

	if (laddr->ss_family != raddr->ss_family ||
	    (raddr->ss_family != AF_INET && raddr->ss_family != AF_INET6))
		return -EAFNOSUPPORT;
	if (param->private_data_len > SIW_MPA_MAX_PD - SIW_MPA_V2_LEN)
		return -EINVAL;
	qp = siw_qp_get_for_cm(sdev, param->qpn);
	if (!qp)
		return -EINVAL;
	siw_qp_connect_access(qp);
	cep = siw_cep_active(sdev, qp, &siw_cep_iw_ops);
	if (!cep)
		return -ENOMEM;
	/* From here on, closing the endpoint drops this reference. */
	cep->cm_id = id;
	id->add_ref(id);
	siw_cm_policy(&cep->pol, param->ird, param->ord, READ_ONCE(mpa_p2p));
	cep->laddr_mapped = id->mapped;
	if (!siw_pm_remapped(id, false))
		cep->pm_hint = siw_pm_no_peer_map_hint(id);
	err = siw_cep_dial(cep, laddr, raddr, param->private_data,
			   param->private_data_len);
	siw_cep_unlock(cep);
	return err;
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

	lockdep_assert_held(&cep->mutex);
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
	struct siw_qp *qp = NULL;
	int err;

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
	err = siw_cep_answer(cep, param->private_data,
			     param->private_data_len);
	if (err) {
		siw_cep_close(cep, false, 0);
		goto out;
	}
	cep->cm_id = id;
	id->add_ref(id);
	err = siw_cep_go_live(cep, 0, cep->res.p2p);
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
