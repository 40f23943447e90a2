// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A slow kernel rdma_cm listener for guest tests: listens on addr:port
 * with a backlog of 1 and takes hold_ms to refuse each connection request
 * it gets. Requests that arrive meanwhile pile up in iw_cm, which keeps
 * no more than the backlog of them and leaves the answer to the others to
 * the iWARP driver. Unloading it logs
 * "siw_cmtest: listener saw N requests".
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <net/net_namespace.h>
#include <rdma/rdma_cm.h>

static char *addr = "127.0.0.1";
module_param(addr, charp, 0444);
MODULE_PARM_DESC(addr, "IPv4 address to listen on");

static ushort port = 20100;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "TCP port to listen on");

static uint hold_ms = 3000;
module_param(hold_ms, uint, 0444);
MODULE_PARM_DESC(hold_ms, "how long the listener takes to refuse a request");

static struct rdma_cm_id *listen_id;
static atomic_t requests = ATOMIC_INIT(0);

static int cmtest_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 0;
	atomic_inc(&requests);
	msleep(hold_ms);
	/* Non-zero: rdma_cm destroys the new ID and rejects the request. */
	return -ECONNREFUSED;
}

static int __init siw_cmtest_init(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int err;

	if (!in4_pton(addr, -1, (u8 *)&sin.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	sin.sin_port = htons(port);

	listen_id = rdma_create_id(&init_net, cmtest_handler, NULL,
				   RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(listen_id))
		return PTR_ERR(listen_id);
	err = rdma_bind_addr(listen_id, (struct sockaddr *)&sin);
	if (!err)
		err = rdma_listen(listen_id, 1);
	if (err) {
		pr_err("cannot listen on %pISpc: %d\n", &sin, err);
		rdma_destroy_id(listen_id);
		return err;
	}
	pr_info("listening on %pISpc, backlog 1\n", &sin);
	return 0;
}

static void __exit siw_cmtest_exit(void)
{
	rdma_destroy_id(listen_id);
	pr_info("listener saw %d requests\n", atomic_read(&requests));
}

module_init(siw_cmtest_init);
module_exit(siw_cmtest_exit);
MODULE_DESCRIPTION("A slow rdma_cm listener for siw guest tests");
MODULE_LICENSE("Dual BSD/GPL");
