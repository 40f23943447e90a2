/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inside the connection manager: the endpoint (cm.c), the listeners that
 * create passive endpoints (cm_listen.c), and the two kinds of endpoint
 * owner: iw_cm (cm_iw.c) and a QP connected without rdma_cm
 * (qp_connect.c). Nothing else includes this.
 */
#ifndef SIW_CM_CEP_H
#define SIW_CM_CEP_H

#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <rdma/iw_cm.h>

#include "cm.h"
#include "proto/mpa.h"

struct siw_cep;
struct siw_listener;

/*
 * What an endpoint's owner decides; cm.c decides the rest (TCP, the MPA
 * exchange, going live, closing). Every op runs under cep->mutex.
 */
struct siw_cep_ops {
	/* Going live moves the QP to RTS (iw_cm), or leaves it in RTR. */
	bool to_rts;
	/* Active side: the connection is up (the QP is live). */
	void (*connected)(struct siw_cep *cep);
	/* Active side: it failed with @status; the op closes @cep. */
	void (*connect_failed)(struct siw_cep *cep, int status);
	/* Active side: the peer's MPA reply rejected us: the status. */
	int (*rejected)(struct siw_cep *cep);
	/* Passive side: a valid MPA request; accept, refuse or report it. */
	void (*request)(struct siw_cep *cep);
	/* The peer closed or reset a connection that was up. */
	void (*peer_gone)(struct siw_cep *cep);
	/* @cep closed (@was_up: it was connected): let go of the owner. */
	void (*closed)(struct siw_cep *cep, bool was_up, int status);
};

extern const struct siw_cep_ops siw_cep_iw_ops;

/* Event bits. */
enum {
	SIW_CEP_EV_CONNECTED,	/* TCP connect done */
	SIW_CEP_EV_DATA,	/* octets to read */
	SIW_CEP_EV_HUP,		/* TCP closed or reset */
	SIW_CEP_EV_TIMEOUT,
	SIW_CEP_EV_CLOSE,	/* close gracefully (QP, engine) */
	SIW_CEP_EV_ABORT,	/* close by abort; the QP's: none once DRAINING */
	SIW_CEP_EV_UNLISTEN,	/* the listener is gone: abort unless reported */
	SIW_CEP_EV_GONE,	/* its device or namespace goes: abort, any state */
};

struct siw_cep {
	struct kref ref;
	u32 id;				/* iw_cm's provider_data, passive */
	const struct siw_cep_ops *ops;	/* its owner's kind */
	struct siw_device *sdev;
	struct work_struct work;
	unsigned long events;
	struct timer_list timer;

	struct mutex mutex;		/* everything below */
	enum siw_cep_state state;
	bool put_alive;			/* closed: drop the table's reference */
	bool waiting;			/* holds room in its listener */
	struct socket *sock;
	struct siw_qp *data_qp;		/* set: upcalls go to the engine */
	bool drop_rx;			/* draining: upcalls drop what comes */
	struct siw_qp *qp;		/* referenced */
	struct siw_listener *listener;	/* passive, until accepted */
	struct list_head lnode;
	struct net *net;		/* the socket's; compared only */
	struct sockaddr_storage laddr;
	struct sockaddr_storage raddr;
	bool laddr_mapped;		/* active: iw_cm asked iwpmd for it */
	const char *pm_hint;		/* active: why a peer may not answer */

	void (*sk_state_change)(struct sock *sk);
	void (*sk_data_ready)(struct sock *sk);
	void (*sk_write_space)(struct sock *sk);

	/* MPA exchange */
	struct siw_mpa_policy pol;
	struct siw_mpa_info req;	/* ours (active) */
	struct siw_mpa_info peer;	/* the peer's frame */
	struct siw_mpa_result res;
	enum siw_mpa_reason reason;
	bool frame_done;		/* peer holds a whole frame */
	u32 have;
	u8 frame[SIW_MPA_MAX_FRAME];

	/* iw_cm's endpoints only (cm_iw.c). */
	struct iw_cm_id *cm_id;		/* referenced (add_ref) */
	struct iw_cm_id *accepted_by;	/* passive: compared only */
	struct siw_qp *iw_qp;		/* the QP iw_cm holds for accepted_by */
};

#define siw_cep_log(level, cep, fmt, ...) do {			\
	const struct siw_cep *__cep = (cep);				\
									\
	siw_##level(__cep->sdev, "connection %pISpc -> %pISpc: " fmt,	\
		    &__cep->laddr, &__cep->raddr, ##__VA_ARGS__);	\
} while (0)

static inline int siw_addr_len(const struct sockaddr_storage *a)
{
	return a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					  sizeof(struct sockaddr_in);
}

/*
 * Has the peer closed its side (FIN), or has the connection failed (a
 * reset)? TCP reports either once, through the state change upcall; an
 * endpoint that could not act on it then (its connection not up yet)
 * looks again here.
 */
static inline bool siw_sk_peer_gone(const struct sock *sk)
{
	return (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN) ||
	       READ_ONCE(sk->sk_err);
}

extern struct workqueue_struct *siw_cm_wq;
unsigned int siw_cm_mpa_timeout_ms(void);
unsigned int siw_cm_accept_timeout_ms(void);
void siw_cm_policy(struct siw_mpa_policy *pol, u16 ird, u16 ord, bool p2p);

/*
 * Endpoints (cm.c). siw_cep_alloc() returns the endpoint NEW and with its
 * mutex held: others may find it by ID at once, and wait for its setup.
 */
struct siw_cep *siw_cep_alloc(struct siw_device *sdev,
			      const struct siw_cep_ops *ops);
struct siw_cep *siw_cep_lookup(u32 id);
void siw_cep_put(struct siw_cep *cep);
void siw_cep_event(struct siw_cep *cep, int ev);
/* The one writer of cep->state; under cep->mutex. */
void siw_cep_set_state(struct siw_cep *cep, enum siw_cep_state to);
void siw_cep_arm(struct siw_cep *cep, unsigned int ms);
void siw_cep_sock_hook(struct siw_cep *cep, struct socket *sock);
void siw_cep_close(struct siw_cep *cep, bool graceful, int status);
void siw_cep_unlock(struct siw_cep *cep);
struct siw_cep *siw_cep_active(struct siw_device *sdev, struct siw_qp *qp,
			       const struct siw_cep_ops *ops);
int siw_cep_dial(struct siw_cep *cep, const struct sockaddr_storage *laddr,
		 const struct sockaddr_storage *raddr, const void *pd,
		 u16 pd_len);
int siw_cep_send(struct siw_cep *cep, const void *buf, size_t len);
int siw_cep_answer(struct siw_cep *cep, const void *pd, u16 pd_len);
void siw_cep_refuse(struct siw_cep *cep, const void *pd, u8 pd_len);
int siw_cep_go_live(struct siw_cep *cep, u8 rtr_send, bool rtr_wait);
void siw_cep_pull_rx(struct siw_cep *cep);
u8 *siw_cep_peer_pd(struct siw_cep *cep);

/* Listeners (cm_listen.c). */
int siw_cm_create_listen(struct iw_cm_id *id, int backlog);
int siw_cm_destroy_listen(struct iw_cm_id *id);
void siw_listener_unlink(struct siw_cep *cep);
bool siw_listener_closing(struct siw_listener *l);
struct iw_cm_id *siw_listener_cm_id(const struct siw_listener *l);
struct siw_listener *siw_cm_listen_port(struct net *net, u16 port,
					const struct siw_cep_ops *ops);
void siw_cm_unlisten(struct siw_listener *l);

#endif /* SIW_CM_CEP_H */
