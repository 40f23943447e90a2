/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Connection management: the iw_cm provider verbs (listen, connect,
 * accept, reject) and the MPA exchange that turns a TCP connection into
 * an iWARP one, after which the engine (engine.h) owns the data stream.
 *
 * Sockets are non-blocking throughout. Socket upcalls and timers only
 * record an event and queue the connection's work item, which does the
 * socket I/O and talks to iw_cm in process context.
 */
#ifndef SIW_CM_H
#define SIW_CM_H

#include <linux/socket.h>
#include <rdma/ib_verbs.h>

struct siw_device;
struct siw_qp;

/*
 * Where a connection endpoint stands (cm_cep.h); named here for the
 * tracepoints (trace.h).
 */
enum siw_cep_state {
	SIW_CEP_NEW,		/* allocated, under its mutex until it moves */
	SIW_CEP_CONNECTING,	/* active: TCP connect under way */
	SIW_CEP_AWAIT_REPLY,	/* active: MPA request sent */
	SIW_CEP_AWAIT_REQUEST,	/* passive: waiting for the MPA request */
	SIW_CEP_REQUESTED,	/* passive: the owner decides on it */
	SIW_CEP_CONNECTED,	/* the engine owns the stream */
	SIW_CEP_DRAINING,	/* closed gracefully, until the peer's FIN */
	SIW_CEP_CLOSED,
};

int siw_cm_module_init(void);
void siw_cm_module_exit(void);

/* Close every connection of @sdev before it goes; may sleep. */
void siw_cm_device_gone(struct siw_device *sdev);

/* Close every connection whose socket is in @net (pernet exit); may sleep. */
struct net;
void siw_cm_net_gone(struct net *net);

/*
 * End the connection of @qp, if it has one: after what was queued
 * (@graceful: a FIN), or by abort (a RST) unless a graceful close was
 * asked first. The QP ends in ERROR, its consumer gets the DISCONNECT
 * and CLOSE events. Any context.
 */
void siw_cm_close(struct siw_qp *qp, bool graceful);

extern const struct ib_device_ops siw_cm_ops;

#endif /* SIW_CM_H */
