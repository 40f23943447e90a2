// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Protection domains and memory regions: plain commands to the kernel. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libsiw.h"

struct ibv_pd *siw_alloc_pd(struct ibv_context *ctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct pabi_alloc_pd cmd;
	struct ibv_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_alloc_pd(ctx, pd, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		siw_err("alloc_pd: %s\n", strerror(err));
		free(pd);
		errno = err;
		return NULL;
	}
	return pd;
}

int siw_dealloc_pd(struct ibv_pd *pd)
{
	int err = ibv_cmd_dealloc_pd(pd);

	if (err) {
		siw_err("dealloc_pd: %s\n", strerror(err));
		return err;
	}
	free(pd);
	return 0;
}

struct ibv_mr *siw_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			  uint64_t hca_va, int access)
{
	struct {
		struct pabi_reg_mr ibv;
		struct siw_ureq_reg_mr siw;
	} cmd;
	struct {
		struct ib_uverbs_reg_mr_resp ibv;
		struct siw_uresp_reg_mr siw;
	} resp;
	struct pabi_mr *mr;
	int err;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	/* The low byte of the STag: siw takes whatever we choose. */
	cmd.siw.stag_key = 0;
	err = ibv_cmd_reg_mr(pd, addr, len, hca_va, access, mr, &cmd.ibv,
			     sizeof(cmd), &resp.ibv, sizeof(resp));
	if (err) {
		siw_err("reg_mr of %zu bytes (access 0x%x): %s\n", len, access,
			strerror(err));
		free(mr);
		errno = err;
		return NULL;
	}
	return &mr->ibv_mr;
}

int siw_dereg_mr(struct pabi_mr *mr)
{
	int err = ibv_cmd_dereg_mr(mr);

	if (err) {
		siw_err("dereg_mr: %s\n", strerror(err));
		return err;
	}
	free(mr);
	return 0;
}
