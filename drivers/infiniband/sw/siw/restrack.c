// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Driver details of a QP for "rdma res show qp -dd": where its send and
 * receive engines stand. Meant for someone looking at a QP that does not
 * move; every value is a snapshot read without the engine's locks.
 */

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

static int siw_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *base)
{
	struct siw_qp *qp = to_siw_qp(base);
	struct nlattr *table;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (siw_res_put_tx(msg, qp) || siw_res_put_queues(msg, qp)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

const struct ib_device_ops siw_restrack_ops = {
	.fill_res_qp_entry = siw_fill_res_qp_entry,
};
