/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel API differences between the kernels siw is built for. The rest of
 * the module calls these wrappers only where an API is known to move, so a
 * port to a newer kernel touches this file first.
 *
 * Supported: Linux 6.1 (Debian 12). Next target: 6.12; see the notes below
 * for what to check there.
 */

#ifndef SIW_COMPAT_H
#define SIW_COMPAT_H

#include <linux/bvec.h>
#include <linux/gfp.h>
#include <linux/netdevice.h>
#include <linux/version.h>
#include <net/tcp.h>
#include <rdma/uverbs_ioctl.h>

/*
 * Tracked references to the bound netdev. netdev_hold()/netdev_put() exist
 * since 6.0 and are unchanged in 6.12; these keep every hold and put of the
 * netdev in one place.
 */
#define siw_netdev_hold(ndev, tracker) netdev_hold(ndev, tracker, GFP_KERNEL)
#define siw_netdev_put(ndev, tracker) netdev_put(ndev, tracker)

/*
 * Hand TCP @len octets of @page at @offset by reference, not by copy, on a
 * socket the caller has locked, without waiting; @more: more of the same
 * message follows; @eor: once all of it is taken, TCP appends nothing more
 * to its skb (MSG_EOR). Returns what TCP took, -EAGAIN when the socket is
 * full, or another negative error. Up
 * to 6.4 that is tcp_sendpage_locked(), which copies by itself where the
 * route cannot gather; 6.5 replaced sendpage with MSG_SPLICE_PAGES. The
 * test is MSG_SENDPAGE_NOTLAST, which went with sendpage: Debian's 6.1
 * defines MSG_SPLICE_PAGES (a stable backport) while its TCP ignores it
 * and copies. The MSG_SPLICE_PAGES branch is not built here yet: the 6.12
 * port checks it.
 */
#ifdef MSG_SENDPAGE_NOTLAST
static inline int siw_tcp_send_page_locked(struct sock *sk, struct page *page,
					   unsigned int offset, size_t len,
					   bool more, bool eor)
{
	int flags = MSG_DONTWAIT | MSG_NOSIGNAL;
	struct sk_buff *skb;
	int rv;

	if (more)
		flags |= MSG_MORE | MSG_SENDPAGE_NOTLAST;
	rv = tcp_sendpage_locked(sk, page, offset, len, flags);
	if (!eor || rv != len)
		return rv;
	/*
	 * sendpage has no MSG_EOR: mark the skb that took the last octet as
	 * tcp_sendmsg_locked() does for it (under the same socket lock).
	 */
	skb = tcp_write_queue_tail(sk);
	if (skb)
		TCP_SKB_CB(skb)->eor = 1;
	return rv;
}
#else
static inline int siw_tcp_send_page_locked(struct sock *sk, struct page *page,
					   unsigned int offset, size_t len,
					   bool more, bool eor)
{
	struct msghdr msg = {
		.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL | MSG_SPLICE_PAGES,
	};
	struct bio_vec bv;

	if (more)
		msg.msg_flags |= MSG_MORE;
	if (eor)
		msg.msg_flags |= MSG_EOR;
	bvec_set_page(&bv, page, len, offset);
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, &bv, 1, len);
	return tcp_sendmsg_locked(sk, &msg, len);
}
#endif

/*
 * Since 6.9 the core hands create_cq the whole uverbs_attr_bundle, NULL
 * for a kernel consumer, where 6.1 handed it the bundle's driver udata.
 * cq.c keeps the 6.1 form and this converts.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
#define SIW_CREATE_CQ_TAKES_ATTRS 1
static inline struct ib_udata *siw_attrs_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define SIW_CREATE_CQ_TAKES_ATTRS 0
#endif

/*
 * To check when adding 6.12 (not verified against its source yet):
 * - ib_device_get_netdev() is private to the RDMA core in 6.1, which is why
 *   struct siw_device keeps its own netdev pointer; newer kernels export it.
 * - Newer cores may dispatch port state events for netdev-bound devices
 *   themselves; netdev.c must then not send them a second time.
 */

#endif /* SIW_COMPAT_H */
