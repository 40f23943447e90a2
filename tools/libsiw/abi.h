/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The rdma-core provider interface, as libibverbs.so.1 of rdma-core 44
 * (private ABI IBVERBS_PRIVATE_34) expects it on x86_64.
 *
 * rdma-core does not install its provider header, so these are our own
 * declarations of the layouts and entry points that ABI fixes. Every
 * layout is pinned by static assertions: sizes, and offsets that were
 * checked against the installed library (verbs_set_ops copies each op to
 * the slot of the same name in struct verbs_context / ibv_context_ops, so
 * its machine code shows where each op sits). A libibverbs with another
 * layout must fail this build, not a user's program.
 */

#ifndef SIW_PROVIDER_ABI_H
#define SIW_PROVIDER_ABI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>

/* Matching a device: we only ever match by kernel driver id. */
enum {
	PABI_MATCH_END = 0,
	PABI_MATCH_DRIVER_ID = 3,
};

struct pabi_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/* libibverbs' record of a device found in sysfs: opaque to us. */
struct pabi_sysfs_dev;

struct pabi_device;

struct pabi_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct pabi_match_ent *match_table;
	const struct pabi_device_ops **static_providers;
	bool (*match_device)(struct pabi_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct pabi_device *(*alloc_device)(struct pabi_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct pabi_device *device);
};

struct pabi_list_node {
	struct pabi_list_node *next, *prev;
};

/* The provider allocates this (alloc_device); libibverbs fills it in. */
struct pabi_device {
	struct ibv_device device;
	const struct pabi_device_ops *ops;
	atomic_int refcount;
	struct pabi_list_node entry;
	struct pabi_sysfs_dev *sysfs;
	uint64_t core_support;
};

enum pabi_mr_type {
	PABI_MR_TYPE_MR,
	PABI_MR_TYPE_NULL_MR,
	PABI_MR_TYPE_IMPORTED_MR,
	PABI_MR_TYPE_DMABUF_MR,
};

struct pabi_mr {
	struct ibv_mr ibv_mr;
	enum pabi_mr_type mr_type;
	int access;
};

/* ibv_qp_to_qp_ex() looks at comp_mask for PABI_QP_EX. */
enum {
	PABI_QP_XRCD = 1 << 0,
	PABI_QP_EX = 1 << 1,
};

struct pabi_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	void *xrcd;
};

/*
 * Every op a provider may supply, in the library's (alphabetical) order.
 * Only the ones siw implements carry their real types; the others are
 * never set and never called through this table.
 */
typedef void (*pabi_unused_op)(void);

struct pabi_context_ops {
	pabi_unused_op advise_mr;
	pabi_unused_op alloc_dm;
	pabi_unused_op alloc_mw;
	pabi_unused_op alloc_null_mr;
	pabi_unused_op alloc_parent_domain;
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	pabi_unused_op alloc_td;
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	pabi_unused_op attach_counters_point_flow;
	pabi_unused_op attach_mcast;
	pabi_unused_op bind_mw;
	pabi_unused_op close_xrcd;
	void (*cq_event)(struct ibv_cq *cq);
	pabi_unused_op create_ah;
	pabi_unused_op create_counters;
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *attr);
	pabi_unused_op create_flow;
	pabi_unused_op create_flow_action_esp;
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	pabi_unused_op create_rwq_ind_table;
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	pabi_unused_op create_srq_ex;
	pabi_unused_op create_wq;
	pabi_unused_op dealloc_mw;
	int (*dealloc_pd)(struct ibv_pd *pd);
	pabi_unused_op dealloc_td;
	int (*dereg_mr)(struct pabi_mr *mr);
	pabi_unused_op destroy_ah;
	pabi_unused_op destroy_counters;
	int (*destroy_cq)(struct ibv_cq *cq);
	pabi_unused_op destroy_flow;
	pabi_unused_op destroy_flow_action;
	int (*destroy_qp)(struct ibv_qp *qp);
	pabi_unused_op destroy_rwq_ind_table;
	int (*destroy_srq)(struct ibv_srq *srq);
	pabi_unused_op destroy_wq;
	pabi_unused_op detach_mcast;
	void (*free_context)(struct ibv_context *context);
	pabi_unused_op free_dm;
	pabi_unused_op get_srq_num;
	pabi_unused_op import_dm;
	pabi_unused_op import_mr;
	pabi_unused_op import_pd;
	pabi_unused_op modify_cq;
	pabi_unused_op modify_flow_action_esp;
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	pabi_unused_op modify_qp_rate_limit;
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
	pabi_unused_op modify_wq;
	pabi_unused_op open_qp;
	pabi_unused_op open_xrcd;
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	pabi_unused_op post_srq_ops;
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	pabi_unused_op query_ece;
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	pabi_unused_op query_qp_data_in_order;
	pabi_unused_op query_rt_values;
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	pabi_unused_op read_counters;
	pabi_unused_op reg_dm_mr;
	pabi_unused_op reg_dmabuf_mr;
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	pabi_unused_op rereg_mr;
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	pabi_unused_op set_ece;
	pabi_unused_op unimport_dm;
	pabi_unused_op unimport_mr;
	pabi_unused_op unimport_pd;
};

/*
 * Commands: the uverbs header, then the kernel's request struct, then the
 * driver's own request data (siw has some for reg_mr only). Responses are
 * the kernel's response struct followed by the driver's.
 */
#define PABI_CMD(name, kstruct)					\
	struct name {						\
		struct ib_uverbs_cmd_hdr hdr;			\
		struct kstruct core;				\
	}

PABI_CMD(pabi_get_context, ib_uverbs_get_context);
PABI_CMD(pabi_query_port, ib_uverbs_query_port);
PABI_CMD(pabi_alloc_pd, ib_uverbs_alloc_pd);
PABI_CMD(pabi_reg_mr, ib_uverbs_reg_mr);
PABI_CMD(pabi_create_cq, ib_uverbs_create_cq);
PABI_CMD(pabi_resize_cq, ib_uverbs_resize_cq);
PABI_CMD(pabi_create_qp, ib_uverbs_create_qp);
PABI_CMD(pabi_modify_qp, ib_uverbs_modify_qp);
PABI_CMD(pabi_query_qp, ib_uverbs_query_qp);
PABI_CMD(pabi_create_srq, ib_uverbs_create_srq);
PABI_CMD(pabi_modify_srq, ib_uverbs_modify_srq);
PABI_CMD(pabi_query_srq, ib_uverbs_query_srq);
PABI_CMD(pabi_post_send, ib_uverbs_post_send);

/* libibverbs entry points for providers (IBVERBS_PRIVATE_34). */
void verbs_register_driver_34(const struct pabi_device_ops *ops);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct pabi_context_ops *ops);

int ibv_cmd_get_context(struct verbs_context *context,
			struct pabi_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct pabi_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct pabi_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct pabi_mr *mr,
		   struct pabi_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct pabi_mr *mr);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct pabi_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct pabi_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct pabi_qp *qp,
			 struct ibv_qp_init_attr_ex *attr,
			 struct pabi_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct pabi_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr,
		     struct pabi_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct pabi_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		       int attr_mask, struct pabi_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		      struct pabi_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);

/* Layout checks (x86_64, libibverbs of rdma-core 36 and later). */
#if defined(__x86_64__)
_Static_assert(sizeof(struct ibv_device) == 664, "ibv_device");
_Static_assert(sizeof(struct pabi_device) == 712, "verbs_device");
_Static_assert(offsetof(struct pabi_device, ops) == 664, "verbs_device.ops");
_Static_assert(offsetof(struct pabi_device, sysfs) == 696,
	       "verbs_device.sysfs");
_Static_assert(sizeof(struct pabi_device_ops) == 72, "verbs_device_ops");
_Static_assert(offsetof(struct pabi_device_ops, alloc_context) == 40,
	       "verbs_device_ops.alloc_context");
_Static_assert(offsetof(struct pabi_device_ops, alloc_device) == 56,
	       "verbs_device_ops.alloc_device");
_Static_assert(sizeof(struct pabi_match_ent) == 24, "verbs_match_ent");
_Static_assert(offsetof(struct pabi_match_ent, kind) == 20,
	       "verbs_match_ent.kind");
_Static_assert(sizeof(struct pabi_context_ops) == 76 * sizeof(void *),
	       "verbs_context_ops: 76 ops");
/* Offsets read from verbs_set_ops in libibverbs.so.1 (rdma-core 44). */
_Static_assert(offsetof(struct pabi_context_ops, alloc_pd) == 0x28, "alloc_pd");
_Static_assert(offsetof(struct pabi_context_ops, create_cq_ex) == 0x80,
	       "create_cq_ex");
_Static_assert(offsetof(struct pabi_context_ops, create_qp_ex) == 0xa0,
	       "create_qp_ex");
_Static_assert(offsetof(struct pabi_context_ops, dealloc_pd) == 0xd0,
	       "dealloc_pd");
_Static_assert(offsetof(struct pabi_context_ops, free_context) == 0x138,
	       "free_context");
_Static_assert(offsetof(struct pabi_context_ops, poll_cq) == 0x1a8, "poll_cq");
_Static_assert(offsetof(struct pabi_context_ops, post_send) == 0x1b8,
	       "post_send");
_Static_assert(offsetof(struct pabi_context_ops, post_srq_recv) == 0x1c8,
	       "post_srq_recv");
_Static_assert(offsetof(struct pabi_context_ops, query_device_ex) == 0x1d0,
	       "query_device_ex");
_Static_assert(offsetof(struct pabi_context_ops, query_qp) == 0x1e8,
	       "query_qp");
_Static_assert(offsetof(struct pabi_context_ops, query_srq) == 0x200,
	       "query_srq");
_Static_assert(offsetof(struct pabi_context_ops, reg_mr) == 0x220, "reg_mr");
_Static_assert(offsetof(struct pabi_context_ops, req_notify_cq) == 0x228,
	       "req_notify_cq");
_Static_assert(offsetof(struct pabi_context_ops, resize_cq) == 0x238,
	       "resize_cq");
_Static_assert(offsetof(struct pabi_context_ops, unimport_pd) == 0x258,
	       "unimport_pd");
_Static_assert(sizeof(struct verbs_context) == 648, "verbs_context");
_Static_assert(offsetof(struct verbs_context, context) == 320,
	       "verbs_context.context");
_Static_assert(sizeof(struct pabi_mr) == sizeof(struct ibv_mr) + 8,
	       "verbs_mr");
_Static_assert(offsetof(struct pabi_qp, comp_mask) == sizeof(struct ibv_qp_ex),
	       "verbs_qp.comp_mask");
_Static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0, "ibv_qp_ex");
_Static_assert(sizeof(struct ib_uverbs_cmd_hdr) == 8, "uverbs header");
_Static_assert(sizeof(struct pabi_post_send) == 32, "post_send command");
#else
#error "libsiw: provider ABI layouts are only checked for x86_64"
#endif

#endif /* SIW_PROVIDER_ABI_H */
