/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared helpers of the verbs test programs in tests/progs.
 *
 * Every program takes the RDMA device name as its first argument and ends
 * with one of three exit codes: 0 passed, 1 failed, 77 skipped because the
 * kernel said a verb it needs is not implemented (EOPNOTSUPP or ENOSYS).
 * Failures print one "FAIL:" line that says what was expected, what
 * happened and, where there is one, the errno by name.
 */
#ifndef SIW_PROGS_COMMON_H
#define SIW_PROGS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#define EXIT_PASS	0
#define EXIT_FAIL	1
#define EXIT_SKIP	77

/*
 * The guest's slowness factor: SIW_TEST_SLOW (tests/run --debug, the debug
 * kernel) stretches every wait for what must come, as tests/vm/lib.sh's
 * bounds are; 1 when unset.
 */
int test_slow(void);

/* How long to wait for completions or events that must come. */
#define WAIT_MS		(10000 * test_slow())
/* How long to keep looking for completions or events that must not come. */
#define QUIET_MS	300

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Program name, set by set_prog() or prog_init(), prefixes every line. */
extern const char *prog;

/*
 * Sets prog to the last part of @argv0 and line-buffers stdout; for
 * programs that parse their own arguments.
 */
void set_prog(const char *argv0);
/* set_prog(), then parses "PROG DEVICE"; returns the device name. */
const char *prog_init(int argc, char **argv);

/* Reporting. */
void step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void fail_err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
void skip(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void pass(void) __attribute__((noreturn));

/* Fails the program when a verb that returns an errno value failed. */
void must(int err, const char *what);

/* "EINVAL (Invalid argument)" for @err. */
const char *errname(int err);
/* The kernel says "not implemented". */
bool is_unsupported(int err);
/* Skips when @err is "not implemented", fails otherwise. */
void fail_or_skip(int err, const char *what)
	__attribute__((noreturn));

/* Objects; each fails the program when it cannot be made. */
struct ibv_context *open_device(const char *name);
struct ibv_pd *make_pd(struct ibv_context *ctx);
/* A CQ; skips when the kernel has no CQs yet. */
struct ibv_cq *make_cq(struct ibv_context *ctx, int cqe);

struct qp_spec {
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_srq *srq;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_sge;
	uint32_t max_inline;
	bool sig_all;
};

/*
 * An RC QP; skips when the kernel has no QPs yet. @cap (may be NULL) gets
 * the capabilities the kernel granted.
 */
struct ibv_qp *make_qp(struct ibv_pd *pd, const struct qp_spec *spec,
		       struct ibv_qp_cap *cap);
/* Same, but returns NULL with errno set instead of failing. */
struct ibv_qp *try_make_qp(struct ibv_pd *pd, const struct qp_spec *spec,
			   enum ibv_qp_type type, struct ibv_qp_cap *cap);

/*
 * Moves @qp to @state with the attribute mask the RDMA CM uses for iWARP
 * (INIT: state, access flags and port; otherwise the state alone).
 * try_ returns 0 or the error; set_ fails the program on error.
 */
int try_set_state(struct ibv_qp *qp, enum ibv_qp_state state);
void set_state(struct ibv_qp *qp, enum ibv_qp_state state);
enum ibv_qp_state get_state(struct ibv_qp *qp);
const char *state_name(enum ibv_qp_state state);

/*
 * Connects @qp without rdma_cm (Documentation/engine.md): INIT, then RTR
 * with an AV from GID @gid_index of port 1 to that same GID and @peer's QP
 * number (a QP of the same device, connected alike), then RTS. The
 * connection comes up in the background; WRs posted meanwhile wait.
 */
void connect_qp_gid(struct ibv_context *ctx, struct ibv_qp *qp,
		    uint32_t peer, int gid_index);

/* Work requests. */
void post_recvs(struct ibv_qp *qp, uint64_t first_id, int n,
		struct ibv_sge *sge);
void post_srq_recvs(struct ibv_srq *srq, uint64_t first_id, int n,
		    struct ibv_sge *sge);
/* Posts @n signalled SENDs; returns ibv_post_send's result. */
int post_sends(struct ibv_qp *qp, uint64_t first_id, int n,
	       struct ibv_sge *sge);

/*
 * Polls @cq until @want completions arrived (or WAIT_MS passed), then keeps
 * polling for QUIET_MS more to catch any surplus, up to @max in all.
 * Returns how many were polled; fails on a poll error.
 */
int collect(struct ibv_cq *cq, struct ibv_wc *wc, int want, int max);
/* Polls @cq for QUIET_MS; returns how many completions arrived. */
int collect_none(struct ibv_cq *cq, struct ibv_wc *wc, int max);

/*
 * Checks @n flush completions: in posting order (wr_id first_id + i),
 * status FLUSH_ERR, from QP @qp_num and, when @opcode >= 0, with that
 * opcode.
 */
void check_flushed(const char *what, const struct ibv_wc *wc, int n,
		   uint64_t first_id, uint32_t qp_num, int opcode);

/* The next async event within @ms (acknowledged), false on timeout. */
bool next_async_event(struct ibv_context *ctx, int ms,
		      struct ibv_async_event *ev);
/*
 * Waits up to @ms for an async event of @type (other events are printed
 * and acknowledged). Returns true with *ev filled (already acknowledged).
 */
bool wait_async_event(struct ibv_context *ctx, enum ibv_event_type type,
		      int ms, struct ibv_async_event *ev);

/* A buffer of @len bytes (rounded up to pages), page aligned, zeroed. */
void *page_alloc(size_t len);
void page_free(void *p, size_t len);
size_t page_round(size_t len);

/* Registers a buffer; NULL when the kernel has no MRs (notes it). */
struct ibv_mr *reg_or_null(struct ibv_pd *pd, void *buf, size_t len);

/*
 * Mappings of the uverbs device in this process, from /proc/self/maps:
 * libsiw maps its CQ, SQ, RQ and SRQ rings there.
 */
struct ring_map {
	uintptr_t start;
	size_t len;
	uint64_t key;	/* file offset: the mmap key the kernel handed out */
};

#define MAX_RING_MAPS	64

int uverbs_maps(struct ring_map *maps, int max);
/* Those in @after that are not in @before. */
int new_maps(const struct ring_map *before, int nb,
	     const struct ring_map *after, int na,
	     struct ring_map *out, int max);

/*
 * The send queue doorbell exactly as libsiw rings it: a write() of
 * IB_USER_VERBS_CMD_POST_SEND with no work request. Returns 0 or errno.
 */
int raw_doorbell(struct ibv_qp *qp);
/*
 * Issues a legacy uverbs write() command (header, then @cmd_len octets of
 * @cmd, whose response pointer says where @resp_len octets go); returns 0
 * or errno.
 */
int uverbs_write(int fd, uint32_t command, const void *cmd, size_t cmd_len,
		 size_t resp_len);

/*
 * ibv_query_srq, or where the provider lacks it (stock libsiw has no
 * query_srq), the same uverbs write() command issued directly.
 */
int query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);

/* query_srq() that fails the test on error; unset fields read all ones. */
struct ibv_srq_attr srq_attr(struct ibv_srq *srq);

/* Fail unless the SRQ's srq_limit reads @want; @when names the moment. */
void expect_srq_limit(struct ibv_srq *srq, uint32_t want, const char *when);

/* Milliseconds of CLOCK_MONOTONIC, for deadlines. */
int64_t mono_ms(void);
void sleep_ms(int ms);

#endif /* SIW_PROGS_COMMON_H */
