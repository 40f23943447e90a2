// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Driver details of a QP for "rdma res show qp -dd": its connection (the
 * iWARP state, both addresses, what MPA settled), what it moved each way,
 * and where its send and receive engines stand. The connection is read
 * under the QP's state_lock; the rest are snapshots read without the
 * engine's locks, for someone looking at a QP that does not move.
 */

#include <linux/atomic.h>
#include <linux/string.h>
#include <net/netlink.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>
#include <uapi/rdma/rdma_netlink.h>

#include "engine.h"
#include "qp.h"
#include "siw.h"

static const char *const siw_tx_kind_names[] = {
	[SIW_TX_IDLE] = "idle",
	[SIW_TX_SQE] = "wr",
	[SIW_TX_RRESP] = "read-resp",
	[SIW_TX_TERM] = "terminate",
	[SIW_TX_RTR] = "rtr",
};

static const char *siw_tx_kind_name(enum siw_tx_kind kind)
{
	if ((unsigned int)kind < ARRAY_SIZE(siw_tx_kind_names))
		return siw_tx_kind_names[kind];
	return "?";
}

/*
 * Flags of the oldest SQ slot: VALID set means a WR waits there. The core
 * may ask while destroy_qp runs (it leaves restrack only afterwards): the
 * ring is read under its lock, and siw_ring_free() takes it away under it.
 */
static u32 siw_res_sq_head_flags(struct siw_qp *qp)
{
	struct siw_ring *sq = &qp->sq;
	unsigned long irqflags;
	u32 flags = 0;

	spin_lock_irqsave(&sq->lock, irqflags);
	if (sq->mem && sq->num)
		flags = READ_ONCE(siw_sqe_at(sq, sq->get)->flags);
	spin_unlock_irqrestore(&sq->lock, irqflags);
	return flags;
}

static int siw_res_put_tx(struct sk_buff *msg, struct siw_qp *qp)
{
	struct siw_tx *tx = &qp->tx;
	unsigned long flags = READ_ONCE(tx->flags);

	if (rdma_nl_put_driver_u32(msg, "tx_attached", !!READ_ONCE(tx->sock)) ||
	    rdma_nl_put_driver_u32(msg, "tx_pending",
				   test_bit(SIW_TX_PENDING, &flags)) ||
	    rdma_nl_put_driver_u32(msg, "tx_hold",
				   test_bit(SIW_TX_HOLD, &flags)) ||
	    rdma_nl_put_driver_string(msg, "tx_msg",
				      siw_tx_kind_name(READ_ONCE(tx->kind))) ||
	    rdma_nl_put_driver_u32(msg, "tx_rtr", READ_ONCE(tx->rtr)) ||
	    rdma_nl_put_driver_u32(msg, "tx_fpdu_len",
				   READ_ONCE(tx->fpdu_len)) ||
	    rdma_nl_put_driver_u32(msg, "tx_fpdu_sent",
				   READ_ONCE(tx->fpdu_sent)) ||
	    rdma_nl_put_driver_u32(msg, "tx_term_sent",
				   READ_ONCE(tx->term_sent)) ||
	    rdma_nl_put_driver_u32(msg, "tx_reads_out",
				   READ_ONCE(tx->reads_out)) ||
	    rdma_nl_put_driver_u32(msg, "tx_unacked",
				   READ_ONCE(tx->sent.put) -
				   READ_ONCE(tx->sent.get)) ||
	    rdma_nl_put_driver_u32(msg, "tx_read_resps",
				   READ_ONCE(tx->irq.put) -
				   READ_ONCE(tx->irq.get)))
		return -EMSGSIZE;
	return 0;
}

static int siw_res_put_queues(struct sk_buff *msg, struct siw_qp *qp)
{
	if (rdma_nl_put_driver_u32(msg, "sq_get", READ_ONCE(qp->sq.get)) ||
	    rdma_nl_put_driver_u32(msg, "sq_put", READ_ONCE(qp->sq.put)) ||
	    rdma_nl_put_driver_u32_hex(msg, "sq_head_flags",
				       siw_res_sq_head_flags(qp)) ||
	    rdma_nl_put_driver_u32(msg, "rq_get", READ_ONCE(qp->rq.get)) ||
	    rdma_nl_put_driver_u32(msg, "rx_attached",
				   READ_ONCE(qp->rx.attached)) ||
	    rdma_nl_put_driver_u32(msg, "rx_dead", READ_ONCE(qp->rx.dead)))
		return -EMSGSIZE;
	return 0;
}

/* The iWARP state the QP's IB state stands for (qp.h). */
static const char *siw_res_iwarp_state(enum ib_qp_state state)
{
	switch (state) {
	case IB_QPS_RTS:
		return "rts";
	case IB_QPS_SQD:
		return "closing";
	case IB_QPS_SQE:
		return "terminate";
	case IB_QPS_ERR:
		return "error";
	default:
		return "idle";
	}
}

static const char *siw_res_fpdu_size(enum siw_fpdu_size size)
{
	switch (size) {
	case SIW_FPDU_LARGE:
		return "large";
	case SIW_FPDU_FIXED:
		return "fixed";
	default:
		return "segment";
	}
}

/*
 * The connection: state, addresses and what MPA settled, copied under
 * state_lock so that one answer shows one connection. Without one the
 * addresses are empty and the MPA revision 0.
 */
static int siw_res_put_link(struct sk_buff *msg, struct siw_qp *qp)
{
	struct sockaddr_storage peer;
	struct siw_qp_link link;
	char laddr[64], raddr[64];
	enum ib_qp_state state;
	unsigned long flags;
	u8 ird, ord;
	bool live;

	spin_lock_irqsave(&qp->state_lock, flags);
	state = qp->state;
	live = qp->link.mpa_rev != 0;
	link = qp->link;
	ird = qp->ird;
	ord = qp->ord;
	peer = qp->peer_addr;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (live) {
		snprintf(laddr, sizeof(laddr), "%pISpc", &link.local_addr);
		snprintf(raddr, sizeof(raddr), "%pISpc", &peer);
	} else {
		strscpy(laddr, "-", sizeof(laddr));
		strscpy(raddr, "-", sizeof(raddr));
	}
	if (rdma_nl_put_driver_string(msg, "iwarp_state",
				      siw_res_iwarp_state(state)) ||
	    rdma_nl_put_driver_string(msg, "local", laddr) ||
	    rdma_nl_put_driver_string(msg, "peer", raddr) ||
	    rdma_nl_put_driver_u32(msg, "mpa_rev", link.mpa_rev) ||
	    rdma_nl_put_driver_u32(msg, "crc", link.crc) ||
	    rdma_nl_put_driver_u32(msg, "markers_tx", link.markers_tx) ||
	    rdma_nl_put_driver_u32(msg, "markers_rx", link.markers_rx) ||
	    rdma_nl_put_driver_u32_hex(msg, "rtr", link.rtr) ||
	    rdma_nl_put_driver_u32(msg, "ird", ird) ||
	    rdma_nl_put_driver_u32(msg, "ord", ord))
		return -EMSGSIZE;
	return 0;
}

/* The FPDU size TX uses and what the QP moved (qp.h: siw_qp_traffic). */
static int siw_res_put_traffic(struct sk_buff *msg, struct siw_qp *qp)
{
	struct siw_qp_traffic *t = &qp->traffic;

	if (rdma_nl_put_driver_string(msg, "fpdu_size",
				      siw_res_fpdu_size(READ_ONCE(qp->tx.fpdu_size))) ||
	    rdma_nl_put_driver_u32(msg, "tx_mulpdu", READ_ONCE(qp->tx.mulpdu)) ||
	    rdma_nl_put_driver_u64(msg, "tx_fpdus",
				   atomic64_read(&t->tx_fpdus)) ||
	    rdma_nl_put_driver_u64(msg, "tx_bytes",
				   atomic64_read(&t->tx_bytes)) ||
	    rdma_nl_put_driver_u64(msg, "rx_fpdus",
				   atomic64_read(&t->rx_fpdus)) ||
	    rdma_nl_put_driver_u64(msg, "rx_bytes",
				   atomic64_read(&t->rx_bytes)))
		return -EMSGSIZE;
	return 0;
}

static int siw_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *base)
{
	struct siw_qp *qp = to_siw_qp(base);
	struct nlattr *table;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (siw_res_put_link(msg, qp) || siw_res_put_traffic(msg, qp) ||
	    siw_res_put_tx(msg, qp) || siw_res_put_queues(msg, qp)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

const struct ib_device_ops siw_restrack_ops = {
	.fill_res_qp_entry = siw_fill_res_qp_entry,
};
