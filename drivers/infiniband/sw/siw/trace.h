/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * siw's tracepoints, events/siw/ in tracefs: state changes of connection
 * endpoints and QPs, every FPDU framed for sending and every DDP segment
 * received, and Terminates both ways. Each event names the device, the
 * QP events also the QP number. Documentation/admin-guide.rst shows how
 * to record them; Documentation/engine.md says where each one fires.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM siw

#if !defined(SIW_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SIW_TRACE_H

#include <linux/in6.h>
#include <linux/socket.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "cm.h"
#include "qp.h"
#include "siw.h"
#include "proto/fpdu.h"
#include "proto/wire.h"

TRACE_DEFINE_ENUM(SIW_CEP_NEW);
TRACE_DEFINE_ENUM(SIW_CEP_CONNECTING);
TRACE_DEFINE_ENUM(SIW_CEP_AWAIT_REPLY);
TRACE_DEFINE_ENUM(SIW_CEP_AWAIT_REQUEST);
TRACE_DEFINE_ENUM(SIW_CEP_REQUESTED);
TRACE_DEFINE_ENUM(SIW_CEP_CONNECTED);
TRACE_DEFINE_ENUM(SIW_CEP_DRAINING);
TRACE_DEFINE_ENUM(SIW_CEP_CLOSED);

#define siw_show_cep_state(s)						\
	__print_symbolic(s,						\
			 { SIW_CEP_NEW, "NEW" },			\
			 { SIW_CEP_CONNECTING, "CONNECTING" },		\
			 { SIW_CEP_AWAIT_REPLY, "AWAIT_REPLY" },	\
			 { SIW_CEP_AWAIT_REQUEST, "AWAIT_REQUEST" },	\
			 { SIW_CEP_REQUESTED, "REQUESTED" },		\
			 { SIW_CEP_CONNECTED, "CONNECTED" },		\
			 { SIW_CEP_DRAINING, "DRAINING" },		\
			 { SIW_CEP_CLOSED, "CLOSED" })

TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);

/* The IB state and, after the slash, the iWARP state it stands for. */
#define siw_show_qp_state(s)						\
	__print_symbolic(s,						\
			 { IB_QPS_RESET, "RESET/IDLE" },		\
			 { IB_QPS_INIT, "INIT/IDLE" },			\
			 { IB_QPS_RTR, "RTR/IDLE" },			\
			 { IB_QPS_RTS, "RTS/RTS" },			\
			 { IB_QPS_SQD, "SQD/CLOSING" },		\
			 { IB_QPS_SQE, "SQE/TERMINATE" },		\
			 { IB_QPS_ERR, "ERR/ERROR" })

TRACE_DEFINE_ENUM(SIW_RDMAP_WRITE);
TRACE_DEFINE_ENUM(SIW_RDMAP_READ_REQ);
TRACE_DEFINE_ENUM(SIW_RDMAP_READ_RESP);
TRACE_DEFINE_ENUM(SIW_RDMAP_SEND);
TRACE_DEFINE_ENUM(SIW_RDMAP_SEND_INV);
TRACE_DEFINE_ENUM(SIW_RDMAP_SEND_SE);
TRACE_DEFINE_ENUM(SIW_RDMAP_SEND_SE_INV);
TRACE_DEFINE_ENUM(SIW_RDMAP_TERMINATE);
TRACE_DEFINE_ENUM(SIW_RDMAP_IMM);
TRACE_DEFINE_ENUM(SIW_RDMAP_IMM_SE);
TRACE_DEFINE_ENUM(SIW_RDMAP_ATOMIC_REQ);
TRACE_DEFINE_ENUM(SIW_RDMAP_ATOMIC_RESP);

#define siw_show_opcode(op)						\
	__print_symbolic(op,						\
			 { SIW_RDMAP_WRITE, "WRITE" },			\
			 { SIW_RDMAP_READ_REQ, "READ_REQ" },		\
			 { SIW_RDMAP_READ_RESP, "READ_RESP" },		\
			 { SIW_RDMAP_SEND, "SEND" },			\
			 { SIW_RDMAP_SEND_INV, "SEND_INV" },		\
			 { SIW_RDMAP_SEND_SE, "SEND_SE" },		\
			 { SIW_RDMAP_SEND_SE_INV, "SEND_SE_INV" },	\
			 { SIW_RDMAP_TERMINATE, "TERMINATE" },		\
			 { SIW_RDMAP_IMM, "IMM" },			\
			 { SIW_RDMAP_IMM_SE, "IMM_SE" },		\
			 { SIW_RDMAP_ATOMIC_REQ, "ATOMIC_REQ" },	\
			 { SIW_RDMAP_ATOMIC_RESP, "ATOMIC_RESP" })

TRACE_DEFINE_ENUM(SIW_TERM_LAYER_RDMAP);
TRACE_DEFINE_ENUM(SIW_TERM_LAYER_DDP);
TRACE_DEFINE_ENUM(SIW_TERM_LAYER_LLP);

#define siw_show_term_layer(l)						\
	__print_symbolic(l,						\
			 { SIW_TERM_LAYER_RDMAP, "RDMAP" },		\
			 { SIW_TERM_LAYER_DDP, "DDP" },			\
			 { SIW_TERM_LAYER_LLP, "LLP" })

#ifndef SIW_TRACE_HELPERS
#define SIW_TRACE_HELPERS
/*
 * The device's name; "-" for an endpoint that belongs to none (one a
 * listener refused before it was matched to a device).
 */
static inline const char *siw_trace_dev_name(const struct siw_device *sdev)
{
	return sdev ? sdev->base.name : "-";
}
#endif

#define siw_trace_dev(dst, sdev)					\
	strscpy(dst, siw_trace_dev_name(sdev), IB_DEVICE_NAME_MAX)

TRACE_EVENT(siw_cep_state,
	TP_PROTO(const struct siw_device *sdev, u32 id,
		 const struct sockaddr_storage *laddr,
		 const struct sockaddr_storage *raddr,
		 enum siw_cep_state from, enum siw_cep_state to),
	TP_ARGS(sdev, id, laddr, raddr, from, to),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, id)
		__array(u8, laddr, sizeof(struct sockaddr_in6))
		__array(u8, raddr, sizeof(struct sockaddr_in6))
		__field(u8, from)
		__field(u8, to)
	),
	TP_fast_assign(
		siw_trace_dev(__entry->dev, sdev);
		__entry->id = id;
		memcpy(__entry->laddr, laddr, sizeof(__entry->laddr));
		memcpy(__entry->raddr, raddr, sizeof(__entry->raddr));
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("%s cep %u %pISpc -> %pISpc: %s -> %s",
		  __entry->dev, __entry->id, __entry->laddr, __entry->raddr,
		  siw_show_cep_state(__entry->from),
		  siw_show_cep_state(__entry->to))
);

TRACE_EVENT(siw_qp_state,
	TP_PROTO(const struct siw_qp *qp, enum ib_qp_state from,
		 enum ib_qp_state to),
	TP_ARGS(qp, from, to),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(u8, from)
		__field(u8, to)
	),
	TP_fast_assign(
		siw_trace_dev(__entry->dev, qp->sdev);
		__entry->qpn = siw_qp_num(qp);
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("%s qp %u: %s -> %s", __entry->dev, __entry->qpn,
		  siw_show_qp_state(__entry->from),
		  siw_show_qp_state(__entry->to))
);

/*
 * One DDP segment: @payload is its DDP payload (0 for a Read Request,
 * whose fields RFC 5040 counts as its header), @ulpdu its MPA ULPDU
 * length (without marker, pad and CRC).
 */
DECLARE_EVENT_CLASS(siw_fpdu,
	TP_PROTO(const struct siw_qp *qp, const struct siw_iwarp_hdr *h,
		 u32 payload, u32 ulpdu),
	TP_ARGS(qp, h, payload, ulpdu),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(u8, opcode)
		__field(bool, tagged)
		__field(bool, last)
		__field(u32, stag_or_qn)
		__field(u64, to_or_mo)
		__field(u32, msn)
		__field(u32, payload)
		__field(u32, ulpdu)
	),
	TP_fast_assign(
		siw_trace_dev(__entry->dev, qp->sdev);
		__entry->qpn = siw_qp_num(qp);
		__entry->opcode = h->opcode;
		__entry->tagged = h->tagged;
		__entry->last = h->last;
		__entry->stag_or_qn = h->tagged ? h->stag : h->qn;
		__entry->to_or_mo = h->tagged ? h->to : h->mo;
		__entry->msn = h->tagged ? 0 : h->msn;
		__entry->payload = payload;
		__entry->ulpdu = ulpdu;
	),
	TP_printk("%s qp %u: %s %s 0x%x %s 0x%llx msn %u payload %u ulpdu %u%s",
		  __entry->dev, __entry->qpn, siw_show_opcode(__entry->opcode),
		  __entry->tagged ? "stag" : "qn", __entry->stag_or_qn,
		  __entry->tagged ? "to" : "mo", __entry->to_or_mo,
		  __entry->msn, __entry->payload, __entry->ulpdu,
		  __entry->last ? " last" : "")
);

/* Framed for sending (TX); TCP takes it next. */
DEFINE_EVENT(siw_fpdu, siw_fpdu_tx,
	TP_PROTO(const struct siw_qp *qp, const struct siw_iwarp_hdr *h,
		 u32 payload, u32 ulpdu),
	TP_ARGS(qp, h, payload, ulpdu)
);

/* Received whole, CRC checked and placed (RX), before its completion. */
DEFINE_EVENT(siw_fpdu, siw_fpdu_rx,
	TP_PROTO(const struct siw_qp *qp, const struct siw_iwarp_hdr *h,
		 u32 payload, u32 ulpdu),
	TP_ARGS(qp, h, payload, ulpdu)
);

TRACE_EVENT(siw_terminate,
	TP_PROTO(const struct siw_qp *qp, const struct siw_term_code *tc,
		 bool sent),
	TP_ARGS(qp, tc, sent),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(bool, sent)
		__field(u8, layer)
		__field(u8, etype)
		__field(u8, ecode)
	),
	TP_fast_assign(
		siw_trace_dev(__entry->dev, qp->sdev);
		__entry->qpn = siw_qp_num(qp);
		__entry->sent = sent;
		__entry->layer = tc->layer;
		__entry->etype = tc->etype;
		__entry->ecode = tc->ecode;
	),
	TP_printk("%s qp %u: Terminate %s: %s %u/%u/0x%02x",
		  __entry->dev, __entry->qpn,
		  __entry->sent ? "sent" : "received",
		  siw_show_term_layer(__entry->layer), __entry->layer,
		  __entry->etype, __entry->ecode)
);

#endif /* SIW_TRACE_H */

/* The definitions are read again from here, with this directory's path. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace

#include <trace/define_trace.h>
