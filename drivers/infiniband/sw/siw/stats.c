// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The device counters' names and their sum for the RDMA core's hw
 * counters (rdma statistic show link siwX/1; sysfs
 * ports/1/hw_counters/). stats.h says what each one counts.
 */

#include <linux/percpu.h>
#include <rdma/ib_verbs.h>

#include "siw.h"
#include "proto/wire.h"

static const struct rdma_stat_desc siw_stat_descs[SIW_NUM_STATS] = {
	[SIW_STAT_TX_FPDUS] = { .name = "tx_fpdus" },
	[SIW_STAT_TX_OCTETS] = { .name = "tx_octets" },
	[SIW_STAT_TX_ZCOPY_FPDUS] = { .name = "tx_zcopy_fpdus" },
	[SIW_STAT_TX_HANDED_OVER] = { .name = "tx_handed_over" },
	[SIW_STAT_RX_FPDUS] = { .name = "rx_fpdus" },
	[SIW_STAT_RX_OCTETS] = { .name = "rx_octets" },
	[SIW_STAT_READ_REQS_SERVED] = { .name = "read_reqs_served" },
	[SIW_STAT_TX_TERM_RDMAP] = { .name = "tx_terminate_rdmap" },
	[SIW_STAT_TX_TERM_DDP] = { .name = "tx_terminate_ddp" },
	[SIW_STAT_TX_TERM_LLP] = { .name = "tx_terminate_llp" },
	[SIW_STAT_RX_TERM_RDMAP] = { .name = "rx_terminate_rdmap" },
	[SIW_STAT_RX_TERM_DDP] = { .name = "rx_terminate_ddp" },
	[SIW_STAT_RX_TERM_LLP] = { .name = "rx_terminate_llp" },
	[SIW_STAT_RX_CRC_ERRORS] = { .name = "rx_crc_errors" },
	[SIW_STAT_RX_BAD_FPDUS] = { .name = "rx_bad_fpdus" },
	[SIW_STAT_RX_PLACE_ERRORS] = { .name = "rx_placement_errors" },
	[SIW_STAT_MPA_REJECTS_SENT] = { .name = "mpa_rejects_sent" },
	[SIW_STAT_MPA_REJECTS_RECV] = { .name = "mpa_rejects_received" },
	[SIW_STAT_CONN_ATTEMPTS] = { .name = "connect_attempts" },
	[SIW_STAT_CONN_FAILED] = { .name = "connect_failures" },
	[SIW_STAT_CONN_ACCEPTED] = { .name = "connects_accepted" },
	[SIW_STAT_CONN_ESTABLISHED] = { .name = "connections_established" },
};

int siw_stats_alloc(struct siw_device *sdev)
{
	sdev->stats = alloc_percpu(struct siw_stats);
	return sdev->stats ? 0 : -ENOMEM;
}

void siw_stats_free(struct siw_device *sdev)
{
	free_percpu(sdev->stats);
	sdev->stats = NULL;
}

enum siw_stat siw_stat_term(u8 layer, bool sent)
{
	switch (layer) {
	case SIW_TERM_LAYER_RDMAP:
		return sent ? SIW_STAT_TX_TERM_RDMAP : SIW_STAT_RX_TERM_RDMAP;
	case SIW_TERM_LAYER_DDP:
		return sent ? SIW_STAT_TX_TERM_DDP : SIW_STAT_RX_TERM_DDP;
	default:
		return sent ? SIW_STAT_TX_TERM_LLP : SIW_STAT_RX_TERM_LLP;
	}
}

static struct rdma_hw_stats *siw_alloc_hw_port_stats(struct ib_device *base,
						     u32 port)
{
	return rdma_alloc_hw_stats_struct(siw_stat_descs, SIW_NUM_STATS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/*
 * The sum over every CPU; a counter read while another CPU adds to it is
 * one event behind at most.
 */
static int siw_get_hw_stats(struct ib_device *base,
			    struct rdma_hw_stats *stats, u32 port, int index)
{
	struct siw_device *sdev = to_siw_device(base);
	int cpu, i;

	for (i = 0; i < SIW_NUM_STATS; i++) {
		u64 sum = 0;

		for_each_possible_cpu(cpu)
			sum += READ_ONCE(per_cpu_ptr(sdev->stats, cpu)->v[i]);
		stats->value[i] = sum;
	}
	return SIW_NUM_STATS;
}

const struct ib_device_ops siw_stats_ops = {
	.alloc_hw_port_stats = siw_alloc_hw_port_stats,
	.get_hw_stats = siw_get_hw_stats,
};
