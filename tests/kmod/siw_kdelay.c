// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Stretches a race window for guest tests, with two kprobes that
 * busy-wait before a function runs:
 *  - func, a socket callback (first argument: struct sock *), ms
 *    milliseconds, for the first "left" calls on a socket that is not
 *    listening;
 *  - pause (optional), any function, pause_ms milliseconds when it
 *    returns (pause_entry=1: when it is entered), for the first
 *    "pause_left" calls.
 * 268-cm-hostile's child case pauses siw's accept work after the
 * tcp_sock_set_nodelay() that siw_cep_sock_hook() does just before it
 * swaps the callbacks of a connection's socket (the last step that locks
 * the socket), while the peer's MPA request arrives and holds
 * siw_lsock_data_ready (the callback the socket copied from the listening
 * one) until the swap is done. 267-cm-netns pauses the endpoint work
 * (siw_cep_work, at entry) while a network namespace goes away.
 * /sys/module/siw_kdelay/parameters/{left,pause_left} count the delays
 * still to come.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <net/inet_sock.h>
#include <net/sock.h>
#include <net/tcp_states.h>

static char *func = "siw_lsock_data_ready";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "socket callback to delay (first argument: struct sock *)");

static uint ms = 300;
module_param(ms, uint, 0444);
MODULE_PARM_DESC(ms, "milliseconds each delay lasts");

static atomic_t left = ATOMIC_INIT(4);
module_param_named(left, left.counter, int, 0444);
MODULE_PARM_DESC(left, "delays still to come (set at load: how many)");

static char *pause;
module_param(pause, charp, 0444);
MODULE_PARM_DESC(pause, "function to delay as it returns (optional)");

static uint pause_ms = 300;
module_param(pause_ms, uint, 0444);
MODULE_PARM_DESC(pause_ms, "milliseconds each pause lasts");

static bool pause_entry;
module_param(pause_entry, bool, 0444);
MODULE_PARM_DESC(pause_entry, "pause when the function is entered, not as it returns");

static atomic_t pause_left = ATOMIC_INIT(4);
module_param_named(pause_left, pause_left.counter, int, 0444);
MODULE_PARM_DESC(pause_left, "pauses still to come (set at load: how many)");

static int siw_kdelay_pause_ret(struct kretprobe_instance *ri,
				struct pt_regs *regs)
{
	if (atomic_add_unless(&pause_left, -1, 0))
		mdelay(pause_ms);
	return 0;
}

/* Pause at entry; returning 1 leaves this call without a return handler. */
static int siw_kdelay_pause_entry(struct kretprobe_instance *ri,
				  struct pt_regs *regs)
{
	siw_kdelay_pause_ret(ri, regs);
	return 1;
}

static struct kretprobe siw_kdelay_pause = {
	.handler = siw_kdelay_pause_ret,
	.maxactive = 4,
};

static int siw_kdelay_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct sock *sk = (struct sock *)regs_get_kernel_argument(regs, 0);

	if (inet_sk_state_load(sk) == TCP_LISTEN)
		return 0;
	if (!atomic_add_unless(&left, -1, 0))
		return 0;
	mdelay(ms);
	return 0;
}

static struct kprobe siw_kdelay_probe = {
	.pre_handler = siw_kdelay_pre,
};

static int __init siw_kdelay_init(void)
{
	int err;

	if (ms > 2000 || pause_ms > 2000)
		return -EINVAL;
	siw_kdelay_probe.symbol_name = func;
	err = register_kprobe(&siw_kdelay_probe);
	if (err) {
		pr_err("no probe on %s: %d\n", func, err);
		return err;
	}
	if (pause) {
		siw_kdelay_pause.kp.symbol_name = pause;
		if (pause_entry) {
			siw_kdelay_pause.entry_handler = siw_kdelay_pause_entry;
			siw_kdelay_pause.handler = NULL;
		}
		err = register_kretprobe(&siw_kdelay_pause);
		if (err) {
			pr_err("no probe on %s: %d\n", pause, err);
			unregister_kprobe(&siw_kdelay_probe);
			return err;
		}
		pr_info("pausing %d %s of %s by %u ms\n",
			atomic_read(&pause_left),
			pause_entry ? "calls" : "returns", pause, pause_ms);
	}
	pr_info("delaying %d calls of %s on non-listening sockets by %u ms\n",
		atomic_read(&left), func, ms);
	return 0;
}

static void __exit siw_kdelay_exit(void)
{
	if (pause) {
		unregister_kretprobe(&siw_kdelay_pause);
		pr_info("%d pauses of %s were not used\n",
			atomic_read(&pause_left), pause);
	}
	unregister_kprobe(&siw_kdelay_probe);
	pr_info("%d delays of %s were not used\n", atomic_read(&left), func);
}

module_init(siw_kdelay_init);
module_exit(siw_kdelay_exit);
MODULE_DESCRIPTION("siw guest tests: stretch a socket callback's race window");
MODULE_LICENSE("Dual BSD/GPL");
