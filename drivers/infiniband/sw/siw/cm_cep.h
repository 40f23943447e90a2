/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inside the connection manager: the endpoint (cm.c) and the listeners
 * that create passive endpoints (cm_listen.c). Nothing else includes this.
 */
#ifndef SIW_CM_CEP_H
#define SIW_CM_CEP_H

#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <rdma/iw_cm.h>

#include "proto/mpa.h"

struct siw_listener;

enum siw_cep_state {
	SIW_CEP_CONNECTING,
	SIW_CEP_AWAIT_REPLY,
	SIW_CEP_AWAIT_REQUEST,
	SIW_CEP_REQUESTED,
	SIW_CEP_CONNECTED,
	SIW_CEP_CLOSED,
};

/* Event bits. */
enum {
	SIW_CEP_EV_CONNECTED,	/* TCP connect done */
	SIW_CEP_EV_DATA,	/* octets to read */
	SIW_CEP_EV_HUP,		/* TCP closed or reset */
	SIW_CEP_EV_TIMEOUT,
	SIW_CEP_EV_CLOSE,	/* close gracefully (QP, engine) */
	SIW_CEP_EV_ABORT,	/* close by abort */
	SIW_CEP_EV_UNLISTEN,	/* the listener is gone: abort unless reported */
};

struct siw_cep {
	struct kref ref;
	u32 id;				/* iw_cm's provider_data, passive */
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
	struct siw_qp *qp;		/* referenced */
	struct iw_cm_id *cm_id;		/* referenced (add_ref) */
	struct siw_listener *listener;	/* passive, until accepted */
	struct iw_cm_id *accepted_by;	/* passive: compared only */
	struct siw_qp *iw_qp;		/* the QP iw_cm holds for accepted_by */
	struct list_head lnode;
	struct net *net;		/* the socket's; compared only */
	struct sockaddr_storage laddr;
	struct sockaddr_storage raddr;

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

extern struct workqueue_struct *siw_cm_wq;
unsigned int siw_cm_mpa_timeout_ms(void);

/* Endpoints (cm.c). */
struct siw_cep *siw_cep_alloc(struct siw_device *sdev);
void siw_cep_event(struct siw_cep *cep, int ev);
void siw_cep_arm(struct siw_cep *cep, unsigned int ms);
void siw_cep_sock_hook(struct siw_cep *cep, struct socket *sock);
void siw_cep_close(struct siw_cep *cep, bool graceful, int status);
void siw_cep_unlock(struct siw_cep *cep);

/* Listeners (cm_listen.c). */
int siw_cm_create_listen(struct iw_cm_id *id, int backlog);
int siw_cm_destroy_listen(struct iw_cm_id *id);
void siw_listener_unlink(struct siw_cep *cep);
bool siw_listener_closing(struct siw_listener *l);
bool siw_listener_is_qpc(const struct siw_listener *l);
struct iw_cm_id *siw_listener_cm_id(const struct siw_listener *l);

#endif /* SIW_CM_CEP_H */
