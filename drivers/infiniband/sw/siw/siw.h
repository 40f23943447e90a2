/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Core types of the soft-iWARP (siw) RDMA provider: the device, its limits,
 * live object accounting and log helpers.
 */

#ifndef SIW_H
#define SIW_H

#include <linux/atomic.h>
#include <linux/minmax.h>
#include <linux/if_ether.h>
#include <linux/netdevice.h>
#include <linux/printk.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "stats.h"

#include "compat.h"

/* Identity. The vendor id spells "siw" in ASCII; it is not an OUI. */
#define SIW_VENDOR_ID		0x736977
#define SIW_VENDOR_PART_ID	0
#define SIW_HW_VER		0
#define SIW_FW_MAJOR		0
#define SIW_FW_MINOR		1
#define SIW_FW_SUBMINOR		0

/* One port, one GID, one (default) P_Key. */
#define SIW_PORT		1
#define SIW_GID_TBL_LEN		16	/* 0: MAC; then IP addresses */
#define SIW_GID_MAC_COPY	(SIW_GID_TBL_LEN - 1)	/* GID 0 again */
#define SIW_PKEY_TBL_LEN	1
#define SIW_DEFAULT_PKEY	0xffff

/*
 * Device limits, as reported by query_device and enforced by the verbs that
 * create objects.
 */
#define SIW_MAX_QP		16384
#define SIW_MAX_QP_WR		16384
#define SIW_MAX_CQ		32768
#define SIW_MAX_CQE		65536
#define SIW_MAX_MR		65536
#define SIW_MAX_PD		65536
#define SIW_MAX_SRQ		4096
#define SIW_MAX_SRQ_WR		16384
#define SIW_MAX_UCONTEXT	1024
/* Inbound (IRD) and outbound (ORD) RDMA READs in flight per QP. */
#define SIW_MAX_IRD		32
#define SIW_MAX_ORD		32
#define SIW_MAX_FR_PAGES	512
/* An RDMA READ targets one sink STag, so one local SGE. */
#define SIW_MAX_SGE_RD		1
#define SIW_MAX_MSG_SIZE	U32_MAX
#define SIW_MAX_MR_SIZE		U64_MAX
#define SIW_NUM_COMP_VECTORS	1
/* SIW_MAX_SGE and SIW_MAX_INLINE come from <rdma/siw-abi.h>. */

/*
 * An IRD or ORD within SIW_MAX_IRD and SIW_MAX_ORD: the one clamp for
 * what a consumer, a peer or a negotiation asks (the engine's IRQ and ORQ
 * are that large).
 */
static inline u16 siw_ird_cap(u32 ird)
{
	return min_t(u32, ird, SIW_MAX_IRD);
}

static inline u16 siw_ord_cap(u32 ord)
{
	return min_t(u32, ord, SIW_MAX_ORD);
}

/*
 * Objects whose live count is kept per device: each count is capped by its
 * limit and must be back at zero when the device goes away.
 */
enum siw_obj_type {
	SIW_OBJ_UCONTEXT,
	SIW_OBJ_PD,
	SIW_OBJ_CQ,
	SIW_OBJ_QP,
	SIW_OBJ_SRQ,
	SIW_OBJ_MR,
	SIW_NUM_OBJ_TYPES
};

struct siw_device {
	struct ib_device base;		/* must stay first */

	struct net_device *netdev;	/* held until dealloc_driver */
	netdevice_tracker netdev_tracker;
	u32 dev_id;			/* reported to user contexts */

	/*
	 * Snapshot of the netdev, written under RTNL by the netdev notifier
	 * (see netdev.c) and read locklessly by the query verbs.
	 */
	enum ib_port_state port_state;
	unsigned int mtu;

	/*
	 * The GID table (gid.c); gid_lock guards gid[] and mac. gid_work
	 * recomputes it when the netdev's addresses change.
	 */
	spinlock_t gid_lock;
	union ib_gid gid[SIW_GID_TBL_LEN];
	struct work_struct gid_work;
	u8 mac[ETH_ALEN];		/* address the GID was made from */
	u8 random_mac[ETH_ALEN];	/* used if the netdev has no MAC */

	atomic_t num_objs[SIW_NUM_OBJ_TYPES];

	/* QPs by QP number, for the CM (qp.c). */
	struct xarray qp_table;
	u32 qp_next_num;

	/* Memory objects by STag index, and what frees them (mem.c). */
	struct xarray mem_table;
	struct workqueue_struct *mem_wq;

	struct siw_stats __percpu *stats;	/* stats.h */
};

static inline struct siw_device *to_siw_device(struct ib_device *base)
{
	return container_of(base, struct siw_device, base);
}

/* Name of the device for log lines; empty until registration names it. */
static inline const char *siw_name(const struct siw_device *sdev)
{
	if (!sdev)
		return "siw";
	return sdev->base.name[0] ? sdev->base.name : "siw(unregistered)";
}

/*
 * Log helpers. Every line names the device; QP and connection helpers that
 * also name the QP and the peer's ip:port are added with those objects.
 */
#define siw_err(sdev, fmt, ...) \
	pr_err("%s: " fmt, siw_name(sdev), ##__VA_ARGS__)
#define siw_warn(sdev, fmt, ...) \
	pr_warn("%s: " fmt, siw_name(sdev), ##__VA_ARGS__)
/* For what a peer or a process can make happen many times a second. */
#define siw_warn_rl(sdev, fmt, ...) \
	pr_warn_ratelimited("%s: " fmt, siw_name(sdev), ##__VA_ARGS__)
#define siw_err_rl(sdev, fmt, ...) \
	pr_err_ratelimited("%s: " fmt, siw_name(sdev), ##__VA_ARGS__)
#define siw_info(sdev, fmt, ...) \
	pr_info("%s: " fmt, siw_name(sdev), ##__VA_ARGS__)
#define siw_info_rl(sdev, fmt, ...) \
	pr_info_ratelimited("%s: " fmt, siw_name(sdev), ##__VA_ARGS__)
#define siw_dbg(sdev, fmt, ...) \
	pr_debug("%s: " fmt, siw_name(sdev), ##__VA_ARGS__)

/* Port state that a netdev in its current state gives the port. */
static inline enum ib_port_state siw_netdev_port_state(struct net_device *ndev)
{
	if (netif_running(ndev) && netif_carrier_ok(ndev))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

/* netdev.c */
struct siw_addr_visitor {
	bool (*add)(struct siw_addr_visitor *v,
		    const struct sockaddr_storage *a);
};

void siw_netdev_walk_addrs(struct net_device *ndev, bool v4, bool v6,
			   struct siw_addr_visitor *v);

/* objcount.c */
bool siw_obj_get(struct siw_device *sdev, enum siw_obj_type type);
void siw_obj_put(struct siw_device *sdev, enum siw_obj_type type);
void siw_obj_report_leaks(struct siw_device *sdev);

/* device.c */
int siw_device_add(const char *name, struct net_device *ndev);

/* netdev.c */
int siw_netdev_event(struct notifier_block *nb, unsigned long event,
		     void *arg);
bool siw_netdev_sync(struct siw_device *sdev);

/* gid.c */
void siw_gid_init(struct siw_device *sdev);
bool siw_gid_refresh(struct siw_device *sdev);
void siw_gid_update(struct siw_device *sdev);
void siw_gid_schedule(struct net_device *ndev);
bool siw_gid_to_addr(struct siw_device *sdev, const union ib_gid *gid,
		     struct sockaddr_storage *addr);
int siw_gid_addr(struct siw_device *sdev, u32 index,
		 struct sockaddr_storage *addr);
int siw_gid_notifiers_register(void);
void siw_gid_notifiers_unregister(void);
int siw_query_gid(struct ib_device *base, u32 port, int index,
		  union ib_gid *gid);

/* Verbs, one set per file; device.c installs them all. */
extern const struct ib_device_ops siw_query_ops;	/* query.c */
extern const struct ib_device_ops siw_ucontext_ops;	/* ucontext.c */
extern const struct ib_device_ops siw_pd_ops;		/* pd.c */
extern const struct ib_device_ops siw_cq_ops;		/* cq.c */
extern const struct ib_device_ops siw_mmap_ops;		/* mmap.c */
extern const struct ib_device_ops siw_mr_ops;		/* mr.c */
extern const struct ib_device_ops siw_qp_ops;		/* qp.c */
extern const struct ib_device_ops siw_srq_ops;		/* srq.c */
extern const struct ib_device_ops siw_restrack_ops;	/* restrack.c */
extern const struct ib_device_ops siw_stats_ops;	/* stats.c */

#endif /* SIW_H */
