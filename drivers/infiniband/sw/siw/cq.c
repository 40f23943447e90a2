// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues: create, destroy, resize, push, poll and arm.
 *
 * The QP engine pushes completions into the ring (queue.h) at put. A
 * slot whose flags hold SIW_WQE_VALID belongs to the consumer: poll_cq
 * for kernel CQs, the process (libsiw) for user CQs, which clears the
 * flags once it has read the CQE. A push that finds its slot still VALID
 * finds the CQ full. The arm word (struct siw_cq_ctrl) after the ring says whether the
 * next push, or the next solicited one, fires the completion handler; the
 * push that fires clears it. Processes arm user CQs by writing that word.
 *
 * Ring sizes are powers of two: libsiw indexes its ring with a free-running
 * 32-bit counter modulo the size, which stays in step with siw's index
 * across the counter's wrap only then.
 *
 * For user CQs the ring is shared memory the process may scribble over at
 * any time: siw decides only on a slot's flags and the arm word, reading
 * each once per decision, and never takes an index or a size from it.
 * Resize copies CQEs over without looking inside them.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/error-injection.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>
#include <rdma/uverbs_ioctl.h>

#include "cq.h"
#include "mmap.h"
#include "siw-abi-ext.h"
#include "siw.h"

static atomic_t siw_cq_last_id = ATOMIC_INIT(0);

/*
 * A zeroed ring of @num CQEs and the arm word. With @uctx (user CQs) it is
 * offered to that process, and *@key says where to map it.
 */
static int siw_cq_ring_create(struct siw_ring *ring, u32 num,
			      struct ib_ucontext *uctx, u64 *key)
{
	int err;

	err = siw_ring_alloc(ring, num, sizeof(struct siw_cqe),
			     sizeof(struct siw_cq_ctrl), !!uctx);
	if (!err && uctx) {
		err = siw_ring_share(ring, uctx, key);
		if (err)
			siw_ring_free(ring);
	}
	return err;
}

static struct siw_cq_ctrl *siw_cq_ctrl(struct siw_cq *cq)
{
	return siw_ring_tail(&cq->ring);
}

static bool siw_cqe_valid(struct siw_cqe *cqe)
{
	/*
	 * Acquire: the rest of the slot is read (poll) or overwritten (push)
	 * only after its owner was seen to hand it over.
	 */
	return smp_load_acquire(&cqe->flags) & SIW_WQE_VALID;
}

static void siw_cqe_write(struct siw_cq *cq, struct siw_cqe *cqe,
			  const struct siw_wc *wc)
{
	u8 flags = SIW_WQE_VALID | (wc->flags & SIW_WQE_REM_INVAL);

	/* libsiw indexes tables with these: keep them in range. */
	cqe->opcode = wc->opcode < SIW_NUM_OPCODES ? wc->opcode : SIW_OP_SEND;
	cqe->status = wc->status < SIW_NUM_WC_STATUS ? wc->status :
						       SIW_WC_GENERAL_ERR;
	cqe->id = wc->id;
	cqe->bytes = wc->bytes;
	if (flags & SIW_WQE_REM_INVAL) {
		cqe->imm_data = 0;
		cqe->inval_stag = wc->inval_stag;
	} else {
		cqe->imm_data = wc->imm_data;
	}
	if (cq->is_user)
		cqe->qp_id = wc->qp ? wc->qp->qp_num : 0;
	else
		cqe->base_qp = wc->qp;

	/* The consumer reads the rest of the CQE only after seeing VALID. */
	smp_store_release(&cqe->flags, flags);
}

static bool siw_cq_arm_covers(u32 arm, bool solicited)
{
	if (arm & SIW_NOTIFY_NEXT_COMPLETION)
		return true;
	return solicited && (arm & SIW_NOTIFY_SOLICITED);
}

/*
 * Consume the arm if it covers this completion. A process re-arming right
 * now may see its new arm cleared here, but then it gets this completion's
 * event, after which it polls and re-arms anyway: no wakeup is lost.
 */
static bool siw_cq_disarm(struct siw_cq *cq, bool solicited)
{
	u32 arm = READ_ONCE(siw_cq_ctrl(cq)->flags);

	lockdep_assert_held(&cq->ring.lock);

	if (!siw_cq_arm_covers(arm, solicited))
		return false;

	WRITE_ONCE(siw_cq_ctrl(cq)->flags, SIW_NOTIFY_NOT);
	return true;
}

static void siw_cq_error_event(struct siw_cq *cq)
{
	struct ib_event event = {
		.device = cq->base.device,
		.element.cq = &cq->base,
		.event = IB_EVENT_CQ_ERR,
	};

	siw_dbg(to_siw_device(cq->base.device), "CQ %u overflowed\n", cq->id);
	if (cq->base.event_handler)
		cq->base.event_handler(&event, cq->base.cq_context);
}

int siw_cq_push(struct siw_cq *cq, const struct siw_wc *wc, bool solicited)
{
	bool notify = false, overflow_event = false;
	unsigned long irqflags;
	struct siw_cqe *cqe;
	int err = 0;

	spin_lock_irqsave(&cq->ring.lock, irqflags);
	cqe = siw_cqe_at(&cq->ring, cq->ring.put);
	if (siw_cqe_valid(cqe)) {
		err = -ENOSPC;
		overflow_event = !cq->overflowed;
		cq->overflowed = true;
	} else {
		siw_cqe_write(cq, cqe, wc);
		cq->ring.put++;
		/*
		 * Order the CQE before reading the arm word: a process that
		 * arms and then polls sees the CQE or gets the event.
		 */
		smp_mb();
		notify = siw_cq_disarm(cq, solicited);
	}
	spin_unlock_irqrestore(&cq->ring.lock, irqflags);

	/* Handlers may poll or re-arm, so they run without the lock. */
	if (overflow_event)
		siw_cq_error_event(cq);
	else if (notify && cq->base.comp_handler)
		cq->base.comp_handler(&cq->base, cq->base.cq_context);
	return err;
}

static const enum ib_wc_opcode siw_ib_wc_opcodes[SIW_NUM_OPCODES] = {
	[SIW_OP_WRITE] = IB_WC_RDMA_WRITE,
	[SIW_OP_READ] = IB_WC_RDMA_READ,
	[SIW_OP_READ_LOCAL_INV] = IB_WC_RDMA_READ,
	[SIW_OP_SEND] = IB_WC_SEND,
	[SIW_OP_SEND_WITH_IMM] = IB_WC_SEND,
	[SIW_OP_SEND_REMOTE_INV] = IB_WC_SEND,
	[SIW_OP_FETCH_AND_ADD] = IB_WC_FETCH_ADD,
	[SIW_OP_COMP_AND_SWAP] = IB_WC_COMP_SWAP,
	[SIW_OP_RECEIVE] = IB_WC_RECV,
	/* SIW_OP_READ_RESPONSE is internal and never completes. */
	[SIW_OP_INVAL_STAG] = IB_WC_LOCAL_INV,
	[SIW_OP_REG_MR] = IB_WC_REG_MR,
};

static const enum ib_wc_status siw_ib_wc_statuses[SIW_NUM_WC_STATUS] = {
	[SIW_WC_SUCCESS] = IB_WC_SUCCESS,
	[SIW_WC_LOC_LEN_ERR] = IB_WC_LOC_LEN_ERR,
	[SIW_WC_LOC_PROT_ERR] = IB_WC_LOC_PROT_ERR,
	[SIW_WC_LOC_QP_OP_ERR] = IB_WC_LOC_QP_OP_ERR,
	[SIW_WC_WR_FLUSH_ERR] = IB_WC_WR_FLUSH_ERR,
	[SIW_WC_BAD_RESP_ERR] = IB_WC_BAD_RESP_ERR,
	[SIW_WC_LOC_ACCESS_ERR] = IB_WC_LOC_ACCESS_ERR,
	[SIW_WC_REM_ACCESS_ERR] = IB_WC_REM_ACCESS_ERR,
	[SIW_WC_REM_INV_REQ_ERR] = IB_WC_REM_INV_REQ_ERR,
	[SIW_WC_GENERAL_ERR] = IB_WC_GENERAL_ERR,
};

static void siw_cqe_to_ib_wc(const struct siw_cqe *cqe, struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->id;
	wc->byte_len = cqe->bytes;
	wc->qp = cqe->base_qp;

	if (cqe->opcode < SIW_NUM_OPCODES)
		wc->opcode = siw_ib_wc_opcodes[cqe->opcode];
	if (cqe->status < SIW_NUM_WC_STATUS)
		wc->status = siw_ib_wc_statuses[cqe->status];
	else
		wc->status = IB_WC_GENERAL_ERR;

	if (cqe->flags & SIW_WQE_REM_INVAL) {
		wc->wc_flags = IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = cqe->inval_stag;
	}
}

/* Kernel CQs only: processes poll their rings themselves. */
static int siw_poll_cq(struct ib_cq *base, int num_entries, struct ib_wc *wc)
{
	struct siw_cq *cq = to_siw_cq(base);
	unsigned long irqflags;
	struct siw_cqe *cqe;
	int n;

	if (cq->is_user)
		return -EOPNOTSUPP;

	spin_lock_irqsave(&cq->ring.lock, irqflags);
	for (n = 0; n < num_entries; n++) {
		cqe = siw_cqe_at(&cq->ring, cq->ring.get);
		if (!siw_cqe_valid(cqe))
			break;
		siw_cqe_to_ib_wc(cqe, &wc[n]);
		WRITE_ONCE(cqe->flags, 0);
		cq->ring.get++;
	}
	spin_unlock_irqrestore(&cq->ring.lock, irqflags);
	return n;
}

/*
 * An arm for the next completion also covers solicited ones, so arms add
 * up. Missed events are reported for kernel CQs only: siw does not know
 * how far a process has polled.
 */
static int siw_req_notify_cq(struct ib_cq *base, enum ib_cq_notify_flags flags)
{
	struct siw_cq *cq = to_siw_cq(base);
	unsigned long irqflags;
	u32 arm, *word;
	int missed = 0;

	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED)
		arm = SIW_NOTIFY_SOLICITED;
	else
		arm = SIW_NOTIFY_NEXT_COMPLETION;

	spin_lock_irqsave(&cq->ring.lock, irqflags);
	word = &siw_cq_ctrl(cq)->flags;
	WRITE_ONCE(*word, READ_ONCE(*word) | arm);
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && !cq->is_user)
		missed = siw_cqe_valid(siw_cqe_at(&cq->ring, cq->ring.get));
	spin_unlock_irqrestore(&cq->ring.lock, irqflags);
	return missed;
}

static int siw_cq_check_size(int cqe)
{
	return cqe >= 1 && cqe <= SIW_MAX_CQE ? 0 : -EINVAL;
}

/* At least @cqe slots; SIW_MAX_CQE is a power of two, so still in limits. */
static u32 siw_cq_num_slots(int cqe)
{
	BUILD_BUG_ON(!is_power_of_2(SIW_MAX_CQE));
	return roundup_pow_of_two(cqe);
}

static int siw_cq_check_attr(struct ib_device *base,
			     const struct ib_cq_init_attr *attr)
{
	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->comp_vector >= base->num_comp_vectors)
		return -EINVAL;
	return siw_cq_check_size(attr->cqe);
}

static struct ib_ucontext *siw_udata_ucontext(struct ib_udata *udata)
{
	return udata ? rdma_udata_to_uverbs_attr_bundle(udata)->context : NULL;
}

static int siw_create_cq(struct ib_cq *base, const struct ib_cq_init_attr *attr,
			 struct ib_udata *udata)
{
	struct siw_device *sdev = to_siw_device(base->device);
	struct siw_uresp_create_cq uresp = {};
	struct siw_cq *cq = to_siw_cq(base);
	int err;

	err = siw_cq_check_attr(base->device, attr);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(uresp))
		return -EINVAL;

	if (!siw_obj_get(sdev, SIW_OBJ_CQ))
		return -ENOMEM;

	cq->is_user = !!udata;
	cq->id = atomic_inc_return(&siw_cq_last_id);
	err = siw_cq_ring_create(&cq->ring, siw_cq_num_slots(attr->cqe),
				 siw_udata_ucontext(udata), &uresp.cq_key);
	if (err)
		goto put_obj;
	base->cqe = cq->ring.num;

	if (udata) {
		uresp.cq_id = cq->id;
		uresp.num_cqe = cq->ring.num;
		err = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (err)
			goto destroy_ring;
	}
	return 0;

destroy_ring:
	siw_ring_free(&cq->ring);
put_obj:
	siw_obj_put(sdev, SIW_OBJ_CQ);
	return err;
}

/* The core destroys a CQ only once no QP or SRQ uses it any more. */
static int siw_destroy_cq(struct ib_cq *base, struct ib_udata *udata)
{
	struct siw_cq *cq = to_siw_cq(base);

	siw_ring_free(&cq->ring);
	siw_obj_put(to_siw_device(base->device), SIW_OBJ_CQ);
	return 0;
}

/*
 * Completions not consumed yet: the VALID run that ends just before put
 * (consumers take CQEs in order; siw does not know how far a process
 * has polled).
 */
static u32 siw_cq_pending(struct siw_cq *cq)
{
	u32 n = 0;

	lockdep_assert_held(&cq->ring.lock);

	while (n < cq->ring.num &&
	       siw_cqe_valid(siw_cqe_at(&cq->ring, cq->ring.put - n - 1)))
		n++;
	return n;
}

/*
 * Move the CQ into @ring: pending completions go to its first slots, in
 * order, and the arm goes with them. Old ring back in @ring.
 */
static int siw_cq_swap_ring(struct siw_cq *cq, struct siw_ring *ring)
{
	struct siw_cq_ctrl *new_ctrl = siw_ring_tail(ring);
	unsigned long irqflags;
	u32 get;
	int err;

	spin_lock_irqsave(&cq->ring.lock, irqflags);
	get = cq->ring.get;
	cq->ring.get = cq->ring.put - siw_cq_pending(cq);
	new_ctrl->flags = READ_ONCE(siw_cq_ctrl(cq)->flags);
	err = siw_ring_move(&cq->ring, ring);
	if (err)
		cq->ring.get = get;
	else
		cq->base.cqe = cq->ring.num;
	spin_unlock_irqrestore(&cq->ring.lock, irqflags);
	return err ? -EINVAL : 0;
}

/*
 * A user CQ's new ring is mapped at a new offset (siw-abi-ext.h); its
 * process must not poll the CQ while resizing it.
 */
static int siw_resize_cq(struct ib_cq *base, int cqe, struct ib_udata *udata)
{
	struct siw_uresp_resize_cq uresp = {};
	struct siw_cq *cq = to_siw_cq(base);
	struct siw_ring ring;
	int err;

	err = siw_cq_check_size(cqe);
	if (err)
		return err;
	if (cq->is_user && (!udata || udata->outlen < sizeof(uresp)))
		return -EINVAL;

	err = siw_cq_ring_create(&ring, siw_cq_num_slots(cqe), cq->is_user ?
				 siw_udata_ucontext(udata) : NULL,
				 &uresp.cq_key);
	if (err)
		return err;

	if (cq->is_user) {
		uresp.num_cqe = ring.num;
		err = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (err)
			goto destroy_ring;
	}

	/* On success, ring is the old one now. */
	err = siw_cq_swap_ring(cq, &ring);
destroy_ring:
	siw_ring_free(&ring);
	return err;
}

#if SIW_CREATE_CQ_TAKES_ATTRS
static int siw_create_cq_attrs(struct ib_cq *base,
			       const struct ib_cq_init_attr *attr,
			       struct uverbs_attr_bundle *attrs)
{
	return siw_create_cq(base, attr, siw_attrs_udata(attrs));
}

#define siw_create_cq_op siw_create_cq_attrs
#else
#define siw_create_cq_op siw_create_cq
#endif

const struct ib_device_ops siw_cq_ops = {
	.create_cq = siw_create_cq_op,
	.destroy_cq = siw_destroy_cq,
	.poll_cq = siw_poll_cq,
	.req_notify_cq = siw_req_notify_cq,
	.resize_cq = siw_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, siw_cq, base),
};
