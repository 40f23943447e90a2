// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Registration with libibverbs, device matching, contexts, device and port
 * queries, and diagnostics.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libsiw.h"

/*
 * Diagnostics go nowhere unless asked for, as with rdma-core's own
 * providers: VERBS_LOG_LEVEL (1 errors ... 4 debug) and VERBS_LOG_FILE
 * (default stderr).
 */
static pthread_once_t siw_log_once = PTHREAD_ONCE_INIT;
static int siw_log_level;
static FILE *siw_log_file;

static void siw_log_setup(void)
{
	const char *level = getenv("VERBS_LOG_LEVEL");
	const char *file = getenv("VERBS_LOG_FILE");

	siw_log_level = level ? atoi(level) : 0;
	siw_log_file = stderr;
	if (siw_log_level > 0 && file && *file) {
		FILE *f = fopen(file, "a");

		if (f)
			siw_log_file = f;
	}
}

void siw_log(int level, const char *fmt, ...)
{
	va_list ap;

	pthread_once(&siw_log_once, siw_log_setup);
	if (level > siw_log_level)
		return;
	va_start(ap, fmt);
	flockfile(siw_log_file);
	fputs("libsiw: ", siw_log_file);
	vfprintf(siw_log_file, fmt, ap);
	funlockfile(siw_log_file);
	fflush(siw_log_file);
	va_end(ap);
}

int siw_query_device_ex(struct ibv_context *ctx,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int err;

	err = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (err) {
		siw_err("query_device: %s\n", strerror(err));
		return err;
	}
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32),
		 (unsigned int)((fw >> 16) & 0xffff),
		 (unsigned int)(fw & 0xffff));
	return 0;
}

int siw_query_port(struct ibv_context *ctx, uint8_t port,
		   struct ibv_port_attr *attr)
{
	struct pabi_query_port cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

static void siw_free_context(struct ibv_context *ibctx)
{
	struct siw_context *ctx = to_siw_ctx(ibctx);

	verbs_uninit_context(&ctx->base);
	free(ctx);
}

static const struct pabi_context_ops siw_context_ops = {
	.alloc_pd = siw_alloc_pd,
	.create_cq = siw_create_cq,
	.create_cq_ex = siw_create_cq_ex,
	.create_qp = siw_create_qp,
	.create_qp_ex = siw_create_qp_ex,
	.create_srq = siw_create_srq,
	.dealloc_pd = siw_dealloc_pd,
	.dereg_mr = siw_dereg_mr,
	.destroy_cq = siw_destroy_cq,
	.destroy_qp = siw_destroy_qp,
	.destroy_srq = siw_destroy_srq,
	.free_context = siw_free_context,
	.modify_qp = siw_modify_qp,
	.modify_srq = siw_modify_srq,
	.poll_cq = siw_poll_cq,
	.post_recv = siw_post_recv,
	.post_send = siw_post_send,
	.post_srq_recv = siw_post_srq_recv,
	.query_device_ex = siw_query_device_ex,
	.query_port = siw_query_port,
	.query_qp = siw_query_qp,
	.query_srq = siw_query_srq,
	.reg_mr = siw_reg_mr,
	.req_notify_cq = siw_req_notify_cq,
	.resize_cq = siw_resize_cq,
};

static struct verbs_context *siw_alloc_context(struct ibv_device *ibdev,
					       int cmd_fd, void *private_data)
{
	struct {
		struct ib_uverbs_get_context_resp ibv;
		struct siw_uresp_alloc_ctx siw;
	} resp;
	struct pabi_get_context cmd;
	struct siw_context *ctx;
	int err;

	(void)private_data;
	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx),
					    &((struct siw_context *)NULL)->base,
					    RDMA_DRIVER_SIW);
	if (!ctx)
		return NULL;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	err = ibv_cmd_get_context(&ctx->base, &cmd, sizeof(cmd), &resp.ibv,
				  sizeof(resp));
	if (err) {
		siw_err("%s: get_context: %s\n", ibdev->name, strerror(err));
		verbs_uninit_context(&ctx->base);
		free(ctx);
		errno = err;
		return NULL;
	}
	ctx->dev_id = resp.siw.dev_id;
	verbs_set_ops(&ctx->base, &siw_context_ops);
	siw_dbg("%s: context opened (siw project provider, dev_id %u)\n",
		ibdev->name, ctx->dev_id);
	return &ctx->base;
}

static struct pabi_device *siw_alloc_device(struct pabi_sysfs_dev *sysfs)
{
	struct siw_device *dev;

	(void)sysfs;
	dev = calloc(1, sizeof(*dev));
	return dev ? &dev->base : NULL;
}

static void siw_uninit_device(struct pabi_device *base)
{
	free(siw_container_of(base, struct siw_device, base));
}

static const struct pabi_match_ent siw_match_table[] = {
	{ .u.driver_id = RDMA_DRIVER_SIW, .kind = PABI_MATCH_DRIVER_ID },
	{ .kind = PABI_MATCH_END },
};

static const struct pabi_device_ops siw_device_ops = {
	.name = "siw",
	.match_min_abi_version = SIW_ABI_VERSION,
	.match_max_abi_version = SIW_ABI_VERSION,
	.match_table = siw_match_table,
	.alloc_device = siw_alloc_device,
	.uninit_device = siw_uninit_device,
	.alloc_context = siw_alloc_context,
};

static __attribute__((constructor)) void siw_register(void)
{
	verbs_register_driver_34(&siw_device_ops);
}
