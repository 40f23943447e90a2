/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Device counters, "rdma statistic show link siwX/1": what the engine and
 * the connection manager did on a device since it was added. Each event
 * is counted where it happens, per CPU, and summed when the core asks
 * (stats.c names them).
 */

#ifndef SIW_STATS_H
#define SIW_STATS_H

#include <linux/percpu.h>
#include <linux/types.h>

enum siw_stat {
	SIW_STAT_TX_FPDUS,		/* FPDUs handed to TCP in full */
	SIW_STAT_TX_OCTETS,		/* their octets, MPA framing included */
	SIW_STAT_TX_ZCOPY_FPDUS,	/* of them, payload sent by page reference */
	SIW_STAT_TX_HANDED_OVER,	/* messages a doorbell left to the work item */
	SIW_STAT_RX_FPDUS,		/* DDP segments placed or taken */
	SIW_STAT_RX_OCTETS,		/* octets read from TCP into the engine */
	SIW_STAT_READ_REQS_SERVED,	/* RDMA Read Responses framed in full */
	SIW_STAT_TX_TERM_RDMAP,		/* Terminates sent, by the layer at fault */
	SIW_STAT_TX_TERM_DDP,
	SIW_STAT_TX_TERM_LLP,
	SIW_STAT_RX_TERM_RDMAP,		/* Terminates received, by layer */
	SIW_STAT_RX_TERM_DDP,
	SIW_STAT_RX_TERM_LLP,
	SIW_STAT_RX_CRC_ERRORS,		/* FPDUs with a bad MPA CRC */
	SIW_STAT_RX_BAD_FPDUS,		/* FPDUs the parser refused otherwise */
	SIW_STAT_RX_PLACE_ERRORS,	/* segments refused at placement */
	SIW_STAT_MPA_REJECTS_SENT,
	SIW_STAT_MPA_REJECTS_RECV,
	SIW_STAT_CONN_ATTEMPTS,		/* TCP connects started (active side) */
	SIW_STAT_CONN_FAILED,		/* active connections that failed */
	SIW_STAT_CONN_ACCEPTED,		/* MPA requests accepted (passive side) */
	SIW_STAT_CONN_ESTABLISHED,	/* QPs that went live, either side */
	SIW_NUM_STATS
};

struct siw_stats {
	u64 v[SIW_NUM_STATS];
};

struct siw_device;

int siw_stats_alloc(struct siw_device *sdev);
void siw_stats_free(struct siw_device *sdev);

/* Count @n more of @s on @sdev (a struct siw_device *): any context. */
#define siw_stat_add(sdev, s, n) this_cpu_add((sdev)->stats->v[s], (n))
#define siw_stat_inc(sdev, s) siw_stat_add(sdev, s, 1)

/* The Terminate counter of layer @layer (SIW_TERM_LAYER_*), sent or not. */
enum siw_stat siw_stat_term(u8 layer, bool sent);

#endif /* SIW_STATS_H */
