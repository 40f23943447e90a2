/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * siw_test.h - a tiny TAP test framework for the userspace unit tests.
 *
 * Each test program is one translation unit:
 *
 *	static void crc_of_zeros(void)
 *	{
 *		CHECK_EQ(siw_crc32c(zeros, 32), 0x8a9136aa);
 *	}
 *
 *	int main(void)
 *	{
 *		RUN(crc_of_zeros);
 *		siw_test_ok(x == y, "table row %d", i);
 *		return siw_test_done();
 *	}
 *
 * Output is TAP: "ok N - name" or "not ok N - name" followed by "# "
 * lines that say which check failed and why; the plan "1..N" comes last.
 * siw_test_done() returns the exit status: 0 only if every test passed.
 *
 * CHECK* record a failure and go on; REQUIRE* also leave the test function
 * (they contain a return, so use them in void functions only).
 */
#ifndef SIW_TEST_H
#define SIW_TEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define SIW_TEST_DIAG_MAX 4096

struct siw_test_state {
	int count;		/* test points emitted */
	int failed;		/* of those, failed */
	int cur_fails;		/* failed checks in the running test */
	size_t diag_len;
	char diag[SIW_TEST_DIAG_MAX];	/* reasons of the running test */
};

static struct siw_test_state siw_test_st __attribute__((unused));

static inline void siw_test_diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Queue one "# ..." reason line for the test point being run. */
static inline void siw_test_diag(const char *fmt, ...)
{
	struct siw_test_state *st = &siw_test_st;
	size_t room = sizeof(st->diag) - st->diag_len;
	va_list ap;
	int n;

	if (room < 8)
		return;
	memcpy(st->diag + st->diag_len, "# ", 2);
	st->diag_len += 2;
	room -= 2;
	va_start(ap, fmt);
	n = vsnprintf(st->diag + st->diag_len, room - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= room - 1)
		n = (int)room - 2;
	st->diag_len += (size_t)n;
	st->diag[st->diag_len++] = '\n';
	st->diag[st->diag_len] = '\0';
}

static inline void siw_test_fail_at(const char *file, int line,
				    const char *what)
{
	siw_test_st.cur_fails++;
	siw_test_diag("%s:%d: %s", file, line, what);
}

/* Emit one test point; the queued reasons follow a failure. */
static inline void siw_test_point(bool pass, const char *name)
{
	struct siw_test_state *st = &siw_test_st;

	st->count++;
	if (pass) {
		printf("ok %d - %s\n", st->count, name);
	} else {
		st->failed++;
		printf("not ok %d - %s\n", st->count, name);
		if (!st->diag_len)
			printf("# failed\n");
	}
	if (!pass && st->diag_len)
		fputs(st->diag, stdout);
	st->diag_len = 0;
	st->diag[0] = '\0';
	st->cur_fails = 0;
	fflush(stdout);
}

static inline void siw_test_ok(bool pass, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A test point on its own: passes iff @pass and no check failed since. */
static inline void siw_test_ok(bool pass, const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	siw_test_point(pass && !siw_test_st.cur_fails, name);
}

/* Run a void test function as one test point named after it. */
#define RUN(fn)								\
	do {								\
		siw_test_st.cur_fails = 0;				\
		fn();							\
		siw_test_point(!siw_test_st.cur_fails, #fn);		\
	} while (0)

/* Print the plan; the program's exit status. */
static inline int siw_test_done(void)
{
	printf("1..%d\n", siw_test_st.count);
	if (siw_test_st.failed)
		printf("# %d of %d tests failed\n", siw_test_st.failed,
		       siw_test_st.count);
	return siw_test_st.failed ? 1 : 0;
}

#define CHECK(cond)							\
	do {								\
		if (!(cond))						\
			siw_test_fail_at(__FILE__, __LINE__,		\
					 "check failed: " #cond);	\
	} while (0)

#define CHECK_EQ(a, b)							\
	do {								\
		unsigned long long _va = (unsigned long long)(a);	\
		unsigned long long _vb = (unsigned long long)(b);	\
		if (_va != _vb) {					\
			siw_test_fail_at(__FILE__, __LINE__,		\
					 #a " == " #b);			\
			siw_test_diag("  got 0x%llx (%llu), want 0x%llx (%llu)", \
				      _va, _va, _vb, _vb);		\
		}							\
	} while (0)

#define CHECK_STR(a, b)							\
	do {								\
		const char *_sa = (a), *_sb = (b);			\
		if (!_sa || !_sb || strcmp(_sa, _sb)) {			\
			siw_test_fail_at(__FILE__, __LINE__,		\
					 #a " equals " #b);		\
			siw_test_diag("  got \"%s\", want \"%s\"",	\
				      _sa ? _sa : "(null)",		\
				      _sb ? _sb : "(null)");		\
		}							\
	} while (0)

#define CHECK_MEM(a, b, n)						\
	do {								\
		const unsigned char *_ma = (const void *)(a);		\
		const unsigned char *_mb = (const void *)(b);		\
		size_t _mi, _mn = (n);					\
		for (_mi = 0; _mi < _mn; _mi++)				\
			if (_ma[_mi] != _mb[_mi])			\
				break;					\
		if (_mi < _mn) {					\
			siw_test_fail_at(__FILE__, __LINE__,		\
					 #a " matches " #b);		\
			siw_test_diag("  first difference at octet %zu: " \
				      "0x%02x, want 0x%02x", _mi,	\
				      _ma[_mi], _mb[_mi]);		\
		}							\
	} while (0)

#define REQUIRE(cond)							\
	do {								\
		if (!(cond)) {						\
			siw_test_fail_at(__FILE__, __LINE__,		\
					 "requirement failed: " #cond);	\
			return;						\
		}							\
	} while (0)

#endif /* SIW_TEST_H */
