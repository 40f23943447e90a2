// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A kernel ULP target for guest tests (264-hostile-kernel-mr): what
 * NVMe-oF or iSER targets do with fast-reg memory, facing a peer that
 * does not play by the rules.
 *
 * It listens with rdma_cm on addr:port (init_net) of the RDMA device dev
 * and serves one connection at a time. For each connection it allocates
 * mr_pages pages with alloc_page() (or, with mr_slab, page-sized kmalloc()
 * objects: slab memory, which siw cannot hold by a page reference and
 * must copy while the MR is still valid), fills them with a known
 * pattern, maps them into an MR of ib_alloc_mr(IB_MR_TYPE_MEM_REG) with
 * ib_map_mr_sg() and, once the connection is up, registers the MR with an
 * IB_WR_REG_MR work request (local write, remote read and write). The
 * accept's private data tells the peer the STag, address and length
 * (struct kt_pd); a Send "READY" tells it the registration is done.
 *
 * Actions, written to /sys/module/siw_ktarget/parameters/act, run
 * synchronously in the writer and end with a "done ACTION" log line:
 *   inval   IB_WR_LOCAL_INV of the MR, wait for its completion, then fill
 *           the pages with the "reused" pattern, as a ULP that freed and
 *           reused them would
 *   rereg   the same, but the MR is registered again under a new key
 *           (ib_update_fast_reg_key, IB_WR_REG_MR) before the fill
 *   check   do the MR's pages still hold the "reused" pattern? (also done
 *           when the connection goes down, if it was reused)
 *   state   log the state of the spare kernel QP (see below)
 *   qploop  create and destroy qploop_n kernel QPs (qploop_wr SQ slots,
 *           receives posted), for races with "rdma res show qp -dd"
 *
 * A Send with Invalidate of the MR's STag (a receive completion with
 * IB_WC_WITH_INVALIDATE) is taken as the peer's word that it is done
 * with the MR: the pages are freed at once, as a ULP may, and
 * spray_pages pages are allocated (the same way) and filled with a secret
 * pattern, to show whose memory siw may still send from.
 *
 * A spare kernel QP in INIT, on no connection, stands for the QP a ULP
 * prepares before it connects; its number is logged at load.
 *
 * Results: "siw_ktarget: PASS ..." or "siw_ktarget: FAIL ..." lines.
 * Everything of a connection is freed when it goes down, the rest at
 * unload. Unload before deleting the RDMA link.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/highmem.h>
#include <linux/inet.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

static char *dev = "siw0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device of addr");

static char *addr = "127.0.0.1";
module_param(addr, charp, 0444);
MODULE_PARM_DESC(addr, "IPv4 address to listen on (init_net)");

static ushort port = 20264;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "TCP port to listen on");

static uint mr_pages = 512;
module_param(mr_pages, uint, 0444);
MODULE_PARM_DESC(mr_pages, "pages of the fast-reg MR of a connection");

static bool mr_slab;
module_param(mr_slab, bool, 0644);
MODULE_PARM_DESC(mr_slab,
		 "new connections take their MR's pages from kmalloc (slab)");

static uint spray_pages = 4096;
module_param(spray_pages, uint, 0644);
MODULE_PARM_DESC(spray_pages,
		 "pages of secret allocated after a remote invalidation");

static uint qploop_n = 2000;
module_param(qploop_n, uint, 0644);
MODULE_PARM_DESC(qploop_n, "QPs the qploop action creates and destroys");

static uint qploop_wr = 1024;
module_param(qploop_wr, uint, 0644);
MODULE_PARM_DESC(qploop_wr, "SQ slots of each qploop QP");

#define KT_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE)
#define KT_NR_RECV	4
#define KT_MSG_SIZE	256
#define KT_WAIT		(5 * HZ)
#define KT_PD_MAGIC	0x4b544754	/* "KTGT" */

/* Page patterns: 8-octet words. */
static const char kt_orig_tag[4] = "ORIG";	/* + le32 word index */
static const char kt_reused[8] = "REUSED!!";
static const char kt_secret[8] = "SeCrEt:)";
static const char kt_peerdata[8] = "PEERDATA";

/* What the accept's private data tells the peer; big endian. */
struct kt_pd {
	__be32 magic;
	__be32 stag;
	__be64 addr;
	__be32 len;
	__be32 qpn;
} __packed;

struct kt_recv {
	struct ib_cqe cqe;
	struct kt_conn *conn;
	void *buf;
	u64 dma;
};

struct kt_conn {
	unsigned int serial;
	struct rdma_cm_id *id;
	struct ib_qp *qp;
	struct ib_mr *mr;
	unsigned long flags;
#define KT_CLOSING	0
#define KT_QP_CREATED	1
	struct work_struct close_work;

	/* pages_lock: the page arrays against a free in the CQ context. */
	struct mutex pages_lock;
	struct page **pages;
	unsigned int npages;
	bool slab;		/* pages are kmalloc()ed, see mr_slab */
	bool freed;		/* pages freed after a remote invalidation */
	bool reused;		/* pages hold kt_reused */
	struct page **secret;
	unsigned int nsecret;

	struct sg_table sgt;
	int sg_nents;		/* mapped, 0 if not */

	struct kt_recv recv[KT_NR_RECV];
	void *rbuf;
	void *sbuf;
	u64 sdma;
	bool rbuf_mapped;
	bool sbuf_mapped;

	struct ib_cqe reg_cqe;		/* REG_MR at ESTABLISHED */
	struct ib_cqe send_cqe;		/* READY */
	struct ib_cqe op_cqe;		/* WRs of actions */
	struct completion op_done;
	enum ib_wc_status op_status;
};

static struct {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *spare;
	struct rdma_cm_id *listen_id;
	struct workqueue_struct *wq;
	bool ready;
} kt;

/* kt_mutex: cur, and one action at a time. */
static DEFINE_MUTEX(kt_mutex);
static struct kt_conn *cur;
static atomic_t kt_serial = ATOMIC_INIT(0);
static char kt_last_act[16];

static const char *kt_qp_state_name(enum ib_qp_state s)
{
	static const char * const names[] = {
		[IB_QPS_RESET] = "RESET", [IB_QPS_INIT] = "INIT",
		[IB_QPS_RTR] = "RTR", [IB_QPS_RTS] = "RTS",
		[IB_QPS_SQD] = "SQD", [IB_QPS_SQE] = "SQE",
		[IB_QPS_ERR] = "ERR",
	};

	return (unsigned int)s < ARRAY_SIZE(names) && names[s] ? names[s] : "?";
}

/* ------------------------------------------------------------------------
 * Page patterns.
 */

static void kt_fill_orig(struct page *page, unsigned int index)
{
	u8 *va = kmap_local_page(page);
	u32 word = index * (PAGE_SIZE / 8);
	unsigned int off;
	__le32 w;

	for (off = 0; off < PAGE_SIZE; off += 8, word++) {
		w = cpu_to_le32(word);
		memcpy(va + off, kt_orig_tag, 4);
		memcpy(va + off + 4, &w, 4);
	}
	kunmap_local(va);
}

static void kt_fill_word(struct page *page, const char *word)
{
	u8 *va = kmap_local_page(page);
	unsigned int off;

	for (off = 0; off < PAGE_SIZE; off += 8)
		memcpy(va + off, word, 8);
	kunmap_local(va);
}

/* Words of @page that are not @word, and of those, how many are @also. */
static unsigned int kt_count_other(struct page *page, const char *word,
				   const char *also, unsigned int *n_also,
				   int *first)
{
	u8 *va = kmap_local_page(page);
	unsigned int off, n = 0;

	for (off = 0; off < PAGE_SIZE; off += 8) {
		if (!memcmp(va + off, word, 8))
			continue;
		if (*first < 0)
			*first = off;
		n++;
		if (!memcmp(va + off, also, 8))
			(*n_also)++;
	}
	kunmap_local(va);
	return n;
}

/* The MR's pages must still hold kt_reused: nothing placed after reuse. */
static void kt_check_reused(struct kt_conn *c, const char *when)
{
	unsigned int i, words = 0, peer = 0;
	long first = -1;

	mutex_lock(&c->pages_lock);
	if (!c->reused || c->freed || !c->pages) {
		pr_info("conn %u: check %s: the MR's pages were not reused\n",
			c->serial, when);
		mutex_unlock(&c->pages_lock);
		return;
	}
	for (i = 0; i < c->npages; i++) {
		int f = -1;

		words += kt_count_other(c->pages[i], kt_reused, kt_peerdata,
					&peer, &f);
		if (first < 0 && f >= 0)
			first = (long)i * PAGE_SIZE + f;
	}
	mutex_unlock(&c->pages_lock);
	if (!words)
		pr_info("PASS conn %u: check %s: the reused pages are intact\n",
			c->serial, when);
	else
		pr_err("FAIL conn %u: check %s: %u octets of the pages were written after the MR was invalidated and the pages reused (%u of them peer data), the first at MR offset %ld\n",
		       c->serial, when, words * 8, peer * 8, first);
}

/* ------------------------------------------------------------------------
 * Work requests of actions: one at a time (kt_mutex).
 */

static void kt_op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kt_conn *c = container_of(wc->wr_cqe, struct kt_conn, op_cqe);

	c->op_status = wc->status;
	complete(&c->op_done);
}

/* Post @wr (signalled, op_cqe) and wait for it: 0, or why not. */
static int kt_post_wait(struct kt_conn *c, struct ib_send_wr *wr,
			const char *what)
{
	int err;

	reinit_completion(&c->op_done);
	wr->wr_cqe = &c->op_cqe;
	wr->send_flags = IB_SEND_SIGNALED;
	err = ib_post_send(c->qp, wr, NULL);
	if (err) {
		pr_err("conn %u: posting %s failed: %d\n", c->serial, what, err);
		return err;
	}
	if (!wait_for_completion_timeout(&c->op_done, KT_WAIT)) {
		/* The CQE may still come: op_cqe stays valid with c. */
		pr_err("conn %u: %s did not complete within %d s\n", c->serial,
		       what, KT_WAIT / HZ);
		return -ETIMEDOUT;
	}
	if (c->op_status != IB_WC_SUCCESS) {
		pr_err("conn %u: %s completed with %s\n", c->serial, what,
		       ib_wc_status_msg(c->op_status));
		return -EIO;
	}
	return 0;
}

static int kt_local_inv(struct kt_conn *c)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.ex.invalidate_rkey = c->mr->rkey,
	};
	int err = kt_post_wait(c, &wr, "LOCAL_INV");

	if (!err)
		pr_info("conn %u: LOCAL_INV of STag 0x%08x completed\n",
			c->serial, c->mr->rkey);
	return err;
}

static int kt_reg_mr_wr(struct kt_conn *c)
{
	struct ib_reg_wr wr = {
		.wr.opcode = IB_WR_REG_MR,
		.mr = c->mr,
		.key = c->mr->rkey,
		.access = KT_MR_ACCESS,
	};

	return kt_post_wait(c, &wr.wr, "REG_MR");
}

/* Fill the MR's pages with kt_reused: they belong to someone else now. */
static void kt_reuse_pages(struct kt_conn *c)
{
	unsigned int i;

	mutex_lock(&c->pages_lock);
	if (c->pages && !c->freed) {
		for (i = 0; i < c->npages; i++)
			kt_fill_word(c->pages[i], kt_reused);
		c->reused = true;
	}
	mutex_unlock(&c->pages_lock);
	pr_info("conn %u: the MR's %u pages now hold the reused pattern\n",
		c->serial, c->npages);
}

static void kt_act_inval(struct kt_conn *c)
{
	if (!kt_local_inv(c))
		kt_reuse_pages(c);
}

static void kt_act_rereg(struct kt_conn *c)
{
	u32 old = c->mr->rkey;
	int n;

	if (kt_local_inv(c))
		return;
	ib_update_fast_reg_key(c->mr, ib_inc_rkey(old) & 0xff);
	n = ib_map_mr_sg(c->mr, c->sgt.sgl, c->sg_nents, NULL, PAGE_SIZE);
	if (n != c->sg_nents) {
		pr_err("conn %u: ib_map_mr_sg mapped %d of %d\n", c->serial, n,
		       c->sg_nents);
		return;
	}
	if (kt_reg_mr_wr(c))
		return;
	pr_info("conn %u: MR registered again: STag 0x%08x -> 0x%08x\n",
		c->serial, old, c->mr->rkey);
	kt_reuse_pages(c);
}

/* ------------------------------------------------------------------------
 * A connection.
 */

/* A page of memory, from the page allocator or (@slab) from kmalloc. */
static struct page *kt_alloc_page(bool slab)
{
	void *p;

	if (!slab)
		return alloc_page(GFP_KERNEL);
	p = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (p && WARN_ON_ONCE(offset_in_page(p))) {
		kfree(p);
		p = NULL;
	}
	return p ? virt_to_page(p) : NULL;
}

static void kt_free_pages(struct page **pages, unsigned int n, bool slab)
{
	unsigned int i;

	if (!pages)
		return;
	for (i = 0; i < n; i++) {
		if (!pages[i])
			continue;
		if (slab)
			kfree(page_address(pages[i]));
		else
			__free_page(pages[i]);
	}
	kvfree(pages);
}

/*
 * The peer invalidated the MR: its pages go back to the page allocator,
 * and someone else's secret moves in.
 */
static void kt_free_and_spray(struct kt_conn *c)
{
	struct page **secret, **pages;
	unsigned int i, n = READ_ONCE(spray_pages), got = 0;

	mutex_lock(&c->pages_lock);
	if (c->freed || !c->pages) {
		mutex_unlock(&c->pages_lock);
		return;
	}
	pages = c->pages;
	c->pages = NULL;
	c->freed = true;
	mutex_unlock(&c->pages_lock);
	kt_free_pages(pages, c->npages, c->slab);

	secret = kvcalloc(n, sizeof(*secret), GFP_KERNEL);
	for (i = 0; secret && i < n; i++) {
		secret[i] = kt_alloc_page(c->slab);
		if (!secret[i])
			break;
		kt_fill_word(secret[i], kt_secret);
		got++;
	}
	mutex_lock(&c->pages_lock);
	if (c->secret)
		kt_free_pages(c->secret, c->nsecret, c->slab);
	c->secret = secret;
	c->nsecret = got;
	mutex_unlock(&c->pages_lock);
	pr_info("conn %u: the MR's %u pages are freed, %u pages of secret allocated\n",
		c->serial, c->npages, got);
	pr_info("done spray\n");
}

static int kt_post_recv(struct kt_recv *r)
{
	struct ib_sge sge = {
		.addr = r->dma,
		.length = KT_MSG_SIZE,
		.lkey = kt.pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &r->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_recv(r->conn->qp, &wr, NULL);
}

static void kt_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kt_recv *r = container_of(wc->wr_cqe, struct kt_recv, cqe);
	struct kt_conn *c = r->conn;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info("conn %u: receive completed with %s\n",
				c->serial, ib_wc_status_msg(wc->status));
		return;
	}
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE) {
		pr_info("conn %u: received a Send with Invalidate of STag 0x%08x (%u octets)\n",
			c->serial, wc->ex.invalidate_rkey, wc->byte_len);
		if (wc->ex.invalidate_rkey == c->mr->rkey)
			kt_free_and_spray(c);
	} else {
		pr_info("conn %u: received a Send of %u octets\n", c->serial,
			wc->byte_len);
	}
	kt_post_recv(r);
}

static void kt_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kt_conn *c = container_of(wc->wr_cqe, struct kt_conn,
					 send_cqe);

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		pr_err("conn %u: READY send completed with %s\n", c->serial,
		       ib_wc_status_msg(wc->status));
}

static void kt_send_ready(struct kt_conn *c)
{
	struct ib_sge sge = {
		.addr = c->sdma,
		.length = 8,
		.lkey = kt.pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = &c->send_cqe,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = 1,
	};
	int err;

	memcpy(c->sbuf, "READY\0\0\0", 8);
	ib_dma_sync_single_for_device(kt.ibdev, c->sdma, 8, DMA_TO_DEVICE);
	err = ib_post_send(c->qp, &wr, NULL);
	if (err)
		pr_err("conn %u: posting READY failed: %d\n", c->serial, err);
}

static void kt_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kt_conn *c = container_of(wc->wr_cqe, struct kt_conn, reg_cqe);

	if (wc->status != IB_WC_SUCCESS) {
		pr_err("conn %u: REG_MR completed with %s\n", c->serial,
		       ib_wc_status_msg(wc->status));
		return;
	}
	pr_info("conn %u: MR STag 0x%08x registered: %llu octets at 0x%llx\n",
		c->serial, c->mr->rkey, c->mr->length, c->mr->iova);
	kt_send_ready(c);
}

static void kt_established(struct kt_conn *c)
{
	struct ib_reg_wr wr = {
		.wr.wr_cqe = &c->reg_cqe,
		.wr.opcode = IB_WR_REG_MR,
		.wr.send_flags = IB_SEND_SIGNALED,
		.mr = c->mr,
		.key = c->mr->rkey,
		.access = KT_MR_ACCESS,
	};
	int err;

	pr_info("conn %u: established\n", c->serial);
	err = ib_post_send(c->qp, &wr.wr, NULL);
	if (err)
		pr_err("conn %u: posting REG_MR failed: %d\n", c->serial, err);
}

/* Everything of @c but the QP and the ID; any part may be missing. */
static void kt_conn_free(struct kt_conn *c)
{
	if (c->mr)
		ib_dereg_mr(c->mr);
	if (c->sg_nents)
		ib_dma_unmap_sg(kt.ibdev, c->sgt.sgl, c->npages,
				DMA_BIDIRECTIONAL);
	sg_free_table(&c->sgt);
	kt_free_pages(c->pages, c->npages, c->slab);
	kt_free_pages(c->secret, c->nsecret, c->slab);
	if (c->rbuf_mapped)
		ib_dma_unmap_single(kt.ibdev, c->recv[0].dma,
				    KT_NR_RECV * KT_MSG_SIZE, DMA_FROM_DEVICE);
	if (c->sbuf_mapped)
		ib_dma_unmap_single(kt.ibdev, c->sdma, KT_MSG_SIZE,
				    DMA_TO_DEVICE);
	kfree(c->rbuf);
	kfree(c->sbuf);
	kfree(c);
}

/* The MR over freshly allocated pages, mapped but not registered. */
static int kt_mr_setup(struct kt_conn *c)
{
	struct scatterlist *sg;
	unsigned int i;
	int err, n;

	c->npages = mr_pages;
	c->slab = READ_ONCE(mr_slab);
	c->pages = kvcalloc(c->npages, sizeof(*c->pages), GFP_KERNEL);
	if (!c->pages)
		return -ENOMEM;
	for (i = 0; i < c->npages; i++) {
		c->pages[i] = kt_alloc_page(c->slab);
		if (!c->pages[i])
			return -ENOMEM;
		kt_fill_orig(c->pages[i], i);
	}
	err = sg_alloc_table(&c->sgt, c->npages, GFP_KERNEL);
	if (err)
		return err;
	for_each_sg(c->sgt.sgl, sg, c->npages, i)
		sg_set_page(sg, c->pages[i], PAGE_SIZE, 0);
	n = ib_dma_map_sg(kt.ibdev, c->sgt.sgl, c->npages, DMA_BIDIRECTIONAL);
	if (n <= 0)
		return -ENOMEM;
	c->sg_nents = n;

	c->mr = ib_alloc_mr(kt.pd, IB_MR_TYPE_MEM_REG, c->npages);
	if (IS_ERR(c->mr)) {
		err = PTR_ERR(c->mr);
		c->mr = NULL;
		return err;
	}
	/* A key of our own, as ULPs pick one per registration. */
	ib_update_fast_reg_key(c->mr, 0x5a);
	n = ib_map_mr_sg(c->mr, c->sgt.sgl, c->sg_nents, NULL, PAGE_SIZE);
	if (n != c->sg_nents)
		return n < 0 ? n : -EINVAL;
	return 0;
}

static int kt_bufs_setup(struct kt_conn *c)
{
	int i;

	c->rbuf = kzalloc(KT_NR_RECV * KT_MSG_SIZE, GFP_KERNEL);
	c->sbuf = kzalloc(KT_MSG_SIZE, GFP_KERNEL);
	if (!c->rbuf || !c->sbuf)
		return -ENOMEM;
	c->recv[0].dma = ib_dma_map_single(kt.ibdev, c->rbuf,
					   KT_NR_RECV * KT_MSG_SIZE,
					   DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(kt.ibdev, c->recv[0].dma))
		return -ENOMEM;
	c->rbuf_mapped = true;
	c->sdma = ib_dma_map_single(kt.ibdev, c->sbuf, KT_MSG_SIZE,
				    DMA_TO_DEVICE);
	if (ib_dma_mapping_error(kt.ibdev, c->sdma))
		return -ENOMEM;
	c->sbuf_mapped = true;
	for (i = 0; i < KT_NR_RECV; i++) {
		c->recv[i].conn = c;
		c->recv[i].cqe.done = kt_recv_done;
		c->recv[i].buf = c->rbuf + i * KT_MSG_SIZE;
		c->recv[i].dma = c->recv[0].dma + i * KT_MSG_SIZE;
	}
	return 0;
}

static void kt_close_work(struct work_struct *work);

static struct kt_conn *kt_conn_alloc(struct rdma_cm_id *id)
{
	struct kt_conn *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (!c)
		return NULL;
	c->serial = atomic_inc_return(&kt_serial);
	c->id = id;
	INIT_WORK(&c->close_work, kt_close_work);
	mutex_init(&c->pages_lock);
	init_completion(&c->op_done);
	c->reg_cqe.done = kt_reg_done;
	c->send_cqe.done = kt_send_done;
	c->op_cqe.done = kt_op_done;
	return c;
}

/* A connection request; non-zero makes rdma_cm refuse it. */
static int kt_conn_request(struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qattr = {
		.send_cq = kt.cq,
		.recv_cq = kt.cq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = 16,
			.max_recv_wr = KT_NR_RECV,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	struct rdma_conn_param param = {
		.responder_resources = 4,
		.initiator_depth = 1,
	};
	struct kt_pd pd;
	struct kt_conn *c;
	int err, i;

	if (id->device != kt.ibdev) {
		pr_err("connection request on device %s, not %s: refused\n",
		       dev_name(&id->device->dev), dev);
		return -EINVAL;
	}
	mutex_lock(&kt_mutex);
	if (cur) {
		pr_info("connection request from %pISpc while conn %u is up: refused\n",
			&id->route.addr.dst_addr, cur->serial);
		mutex_unlock(&kt_mutex);
		return -EBUSY;
	}
	c = kt_conn_alloc(id);
	if (!c) {
		mutex_unlock(&kt_mutex);
		return -ENOMEM;
	}
	err = kt_mr_setup(c);
	if (!err)
		err = kt_bufs_setup(c);
	if (!err)
		err = rdma_create_qp(id, kt.pd, &qattr);
	if (err)
		goto fail;
	c->qp = id->qp;
	set_bit(KT_QP_CREATED, &c->flags);
	for (i = 0; i < KT_NR_RECV && !err; i++)
		err = kt_post_recv(&c->recv[i]);
	if (err)
		goto fail;

	pd.magic = cpu_to_be32(KT_PD_MAGIC);
	pd.stag = cpu_to_be32(c->mr->rkey);
	pd.addr = cpu_to_be64(c->mr->iova);
	pd.len = cpu_to_be32((u32)c->mr->length);
	pd.qpn = cpu_to_be32(c->qp->qp_num);
	param.private_data = &pd;
	param.private_data_len = sizeof(pd);
	id->context = c;
	err = rdma_accept(id, &param);
	if (err) {
		id->context = NULL;
		goto fail;
	}
	cur = c;
	mutex_unlock(&kt_mutex);
	pr_info("conn %u: accepted %pISpc on QP %u: MR STag 0x%08x, %llu octets at 0x%llx in %u pages%s\n",
		c->serial, &id->route.addr.dst_addr, c->qp->qp_num,
		c->mr->rkey, c->mr->length, c->mr->iova, c->npages,
		c->slab ? " of slab memory" : "");
	return 0;

fail:
	mutex_unlock(&kt_mutex);
	pr_err("conn %u: setting up the connection from %pISpc failed: %d\n",
	       c->serial, &id->route.addr.dst_addr, err);
	if (test_bit(KT_QP_CREATED, &c->flags))
		rdma_destroy_qp(id);
	kt_conn_free(c);
	return err;
}

static void kt_close(struct kt_conn *c)
{
	if (!test_and_set_bit(KT_CLOSING, &c->flags))
		queue_work(kt.wq, &c->close_work);
}

static void kt_close_work(struct work_struct *work)
{
	struct kt_conn *c = container_of(work, struct kt_conn, close_work);
	unsigned int serial = c->serial;

	rdma_disconnect(c->id);
	/* No completion of c's WRs comes after this. */
	ib_drain_qp(c->qp);

	mutex_lock(&kt_mutex);
	if (cur == c)
		cur = NULL;
	mutex_unlock(&kt_mutex);
	if (c->reused)
		kt_check_reused(c, "at disconnect");

	/* The ID first: iw_cm lets go of the QP with it. */
	rdma_destroy_id(c->id);
	ib_destroy_qp(c->qp);
	kt_conn_free(c);
	pr_info("conn %u: closed, everything freed\n", serial);
}

static int kt_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kt_conn *c = id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return kt_conn_request(id);
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c)
			kt_established(c);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (c) {
			pr_info("conn %u: %s (%d)\n", c->serial,
				rdma_event_msg(ev->event), ev->status);
			kt_close(c);
		}
		break;
	default:
		break;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Kernel QPs with no connection.
 */

static struct ib_qp *kt_bare_qp(u32 send_wr)
{
	struct ib_qp_init_attr qattr = {
		.send_cq = kt.cq,
		.recv_cq = kt.cq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = send_wr,
			.max_recv_wr = 8,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.qp_access_flags = IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_WRITE,
	};
	struct ib_qp *qp = ib_create_qp(kt.pd, &qattr);
	int err;

	if (IS_ERR(qp))
		return qp;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_ACCESS_FLAGS);
	if (err) {
		ib_destroy_qp(qp);
		return ERR_PTR(err);
	}
	return qp;
}

static void kt_act_state(void)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int err = ib_query_qp(kt.spare, &attr, IB_QP_STATE, &init);

	if (err)
		pr_err("spare QP %u: query failed: %d\n", kt.spare->qp_num, err);
	else
		pr_info("spare QP %u: state %s\n", kt.spare->qp_num,
			kt_qp_state_name(attr.qp_state));
}

/* Receives that never complete: kernel QPs drop them at destroy. */
static void kt_dummy_done(struct ib_cq *cq, struct ib_wc *wc)
{
}

static struct ib_cqe kt_dummy_cqe = { .done = kt_dummy_done };

static void kt_act_qploop(void)
{
	unsigned int i, n = READ_ONCE(qploop_n);
	struct ib_recv_wr wr = { .wr_cqe = &kt_dummy_cqe };
	struct ib_qp *qp;
	int err, j;

	for (i = 0; i < n; i++) {
		qp = kt_bare_qp(READ_ONCE(qploop_wr));
		if (IS_ERR(qp)) {
			pr_err("FAIL qploop: QP %u of %u: create failed: %ld\n",
			       i, n, PTR_ERR(qp));
			return;
		}
		for (j = 0, err = 0; j < 4 && !err; j++)
			err = ib_post_recv(qp, &wr, NULL);
		ib_destroy_qp(qp);
		if (err) {
			pr_err("FAIL qploop: post_recv: %d\n", err);
			return;
		}
		cond_resched();
	}
	pr_info("qploop: %u kernel QPs created and destroyed\n", n);
}

/* ------------------------------------------------------------------------
 * Actions.
 */

static void kt_act_check(struct kt_conn *c)
{
	kt_check_reused(c, "on request");
}

struct kt_act {
	const char *name;
	void (*on_conn)(struct kt_conn *c);	/* needs the connection */
	void (*on_dev)(void);
};

static const struct kt_act kt_acts[] = {
	{ "inval", kt_act_inval, NULL },
	{ "rereg", kt_act_rereg, NULL },
	{ "check", kt_act_check, NULL },
	{ "state", NULL, kt_act_state },
	{ "qploop", NULL, kt_act_qploop },
};

static int kt_act_set(const char *val, const struct kernel_param *kp)
{
	const struct kt_act *a = NULL;
	unsigned int i;

	if (!READ_ONCE(kt.ready))
		return -EAGAIN;
	for (i = 0; i < ARRAY_SIZE(kt_acts); i++)
		if (sysfs_streq(val, kt_acts[i].name))
			a = &kt_acts[i];
	if (!a)
		return -EINVAL;

	mutex_lock(&kt_mutex);
	strscpy(kt_last_act, a->name, sizeof(kt_last_act));
	if (a->on_dev)
		a->on_dev();
	else if (cur)
		a->on_conn(cur);
	else
		pr_info("%s: no connection\n", a->name);
	mutex_unlock(&kt_mutex);
	pr_info("done %s\n", a->name);
	return 0;
}

static int kt_act_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", kt_last_act);
}

static const struct kernel_param_ops kt_act_ops = {
	.set = kt_act_set,
	.get = kt_act_get,
};
module_param_cb(act, &kt_act_ops, NULL, 0644);
MODULE_PARM_DESC(act, "action: inval, rereg, check, state, qploop");

/* ------------------------------------------------------------------------
 * Load, unload.
 */

static int kt_listen(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int err;

	if (!in4_pton(addr, -1, (u8 *)&sin.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	sin.sin_port = htons(port);
	kt.listen_id = rdma_create_id(&init_net, kt_cm_handler, NULL,
				      RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(kt.listen_id)) {
		err = PTR_ERR(kt.listen_id);
		kt.listen_id = NULL;
		return err;
	}
	err = rdma_bind_addr(kt.listen_id, (struct sockaddr *)&sin);
	if (!err)
		err = rdma_listen(kt.listen_id, 4);
	if (err) {
		pr_err("cannot listen on %pISpc: %d\n", &sin, err);
		rdma_destroy_id(kt.listen_id);
		kt.listen_id = NULL;
		return err;
	}
	pr_info("listening on %pISpc\n", &sin);
	return 0;
}

static void kt_teardown(void)
{
	struct kt_conn *c;

	if (kt.listen_id)
		rdma_destroy_id(kt.listen_id);
	if (kt.wq) {
		mutex_lock(&kt_mutex);
		c = cur;
		if (c)
			kt_close(c);
		mutex_unlock(&kt_mutex);
		destroy_workqueue(kt.wq);
	}
	if (kt.spare)
		ib_destroy_qp(kt.spare);
	if (kt.cq)
		ib_free_cq(kt.cq);
	if (kt.pd)
		ib_dealloc_pd(kt.pd);
	ib_device_put(kt.ibdev);
}

static int __init siw_ktarget_init(void)
{
	int err;

	if (!mr_pages || mr_pages > 4096)
		return -EINVAL;
	kt.ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!kt.ibdev) {
		pr_err("no RDMA device %s\n", dev);
		return -ENODEV;
	}
	err = -ENOMEM;
	kt.wq = alloc_workqueue("siw_ktarget", WQ_UNBOUND, 0);
	if (!kt.wq)
		goto fail;
	kt.pd = ib_alloc_pd(kt.ibdev, 0);
	if (IS_ERR(kt.pd)) {
		err = PTR_ERR(kt.pd);
		kt.pd = NULL;
		goto fail;
	}
	kt.cq = ib_alloc_cq(kt.ibdev, NULL, 256, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(kt.cq)) {
		err = PTR_ERR(kt.cq);
		kt.cq = NULL;
		goto fail;
	}
	kt.spare = kt_bare_qp(16);
	if (IS_ERR(kt.spare)) {
		err = PTR_ERR(kt.spare);
		kt.spare = NULL;
		goto fail;
	}
	pr_info("spare kernel QP %u in INIT\n", kt.spare->qp_num);
	err = kt_listen();
	if (err)
		goto fail;
	WRITE_ONCE(kt.ready, true);
	return 0;

fail:
	pr_err("setup failed: %d\n", err);
	kt_teardown();
	return err;
}

static void __exit siw_ktarget_exit(void)
{
	WRITE_ONCE(kt.ready, false);
	kt_teardown();
	pr_info("unloaded\n");
}

module_init(siw_ktarget_init);
module_exit(siw_ktarget_exit);
MODULE_DESCRIPTION("A kernel ULP target with fast-reg memory for siw guest tests");
MODULE_LICENSE("Dual BSD/GPL");
