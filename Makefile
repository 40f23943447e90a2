# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Top-level Makefile of the siw project: builds siw.ko out of tree, installs
# it, and runs the tests (userspace unit tests, then QEMU guest tests).

# Newest installed kernel that has headers (Debian's linux-headers-amd64),
# unless the caller says otherwise (KVER, or SIW_KERNEL: a kernel build
# directory such as make debug-kernel's); tools/kver decides.
# Both are read where they are used, not when make starts: on a bare
# machine the headers come with `make deps`, which `make demo` runs first.
KVER ?= $(shell tools/kver)
KDIR ?= $(shell tools/kver --build)
SIWDIR := $(CURDIR)/drivers/infiniband/sw/siw
BUILD := $(CURDIR)/build
KBUILD_ARGS = -C $(KDIR) M=$(SIWDIR) CONFIG_RDMA_SIW=m

# Kernel source tree (Debian linux-source), unpacked only for tooling:
# checkpatch.pl and, later, Linux's own siw as an interop test peer.
KSRC_TAR ?= $(firstword $(wildcard /usr/src/linux-source-*.tar.xz))
KSRC := $(BUILD)/linux-source

export KVER

.PHONY: all modules ktest clean deps install uninstall check unit vm-tests \
	demo checkpatch sparse fuzz-smoke fuzz-long style perf libsiw \
	debug-kernel check-debug check-instruments soak check-full deb

all: modules

modules:
	@test -d $(KDIR) || { echo "no kernel headers for $(KVER): run 'make deps'"; exit 1; }
	$(MAKE) $(KBUILD_ARGS) W=1 modules

# Kernel verbs consumer used by the guest tests (tests/kmod).
ktest:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod W=1 modules

# Our rdma-core provider (tools/libsiw) into build/libsiw, plus its
# check program, and the check of its imports (IBVERBS_PRIVATE_34).
libsiw:
	$(MAKE) -C tools/libsiw O=$(BUILD)/libsiw all check-abi

sparse:
	$(MAKE) $(KBUILD_ARGS) W=1 C=2 modules

$(KSRC)/.unpacked:
	@test -n "$(KSRC_TAR)" || { echo "linux-source not installed: run 'make deps'"; exit 1; }
	mkdir -p $(KSRC)
	tar -xJf $(KSRC_TAR) -C $(KSRC) --strip-components=1 \
		--wildcards '*/scripts' '*/drivers/infiniband/sw/siw'
	touch $@

checkpatch: $(KSRC)/.unpacked
	tools/checkpatch-all $(KSRC)/scripts/checkpatch.pl

# Style gate: checkpatch --strict and sparse, both must be silent.
style: checkpatch sparse

deps:
	tools/deps

unit:
	$(MAKE) -C tests/unit check

fuzz-smoke:
	$(MAKE) -C tests/fuzz fuzz-smoke

fuzz-long:
	$(MAKE) -C tests/fuzz fuzz-long

# The one test command: build and style gates, unit tests, fuzz smoke, then
# every guest test. The build is itself a test, so a broken build still
# ends in the summary line.
check:
	tests/run

# make check, with every cell of the matrices that make check deals
# between a test's stock-provider and our-provider runs run in both.
check-full:
	SIW_TEST_FULL=1 tests/run $(ARGS)

vm-tests: modules
	tests/run --vm-only

# The debug kernel (KASAN, UBSAN, lockdep, kmemleak, fault injection):
# Debian's 6.1 source built with tools/debug-kernel/siw-debug.config,
# cached outside the tree; the last line printed is its build directory.
debug-kernel:
	@tools/debug-kernel/build

# Every guest test on the debug kernel (siw.ko and the test modules built
# against it), e.g. make check-debug ARGS=rping; see Documentation/testing.md.
check-debug:
	@dir=$$(tools/debug-kernel/build -q | tail -n1) && \
	env -u KVER -u KDIR SIW_KERNEL=$$dir tests/run --vm-only --debug $(ARGS)

# Soak on the debug kernel: mixed traffic with link flaps for SOAK_SECS
# (default 3600) seconds, tests/vm/soak.sh; Documentation/testing.md.
SOAK_SECS ?= 3600
soak:
	@dir=$$(tools/debug-kernel/build -q | tail -n1) && \
	env -u KVER -u KDIR SIW_KERNEL=$$dir SIW_TEST_SOAK_SECS=$(SOAK_SECS) \
		tests/run --vm-only --debug --soak

# Injected bugs (a double put, an array overrun, an AB-BA lock order), each
# of which must make check-debug fail with its report; tools/debug-kernel/
# inject/, e.g. make check-instruments ARGS=abba.
check-instruments:
	tools/debug-kernel/check-instruments $(ARGS)

# Benchmarks, our siw against Linux's siw, TCP, NVMe/TCP and NFS/TCP, one
# guest per part (Documentation/testing.md); options through PERF_ARGS,
# e.g. make perf PERF_ARGS="--parts lat --rounds 9".
perf: modules
	tests/perf/run $(PERF_ARGS)

# A make of its own builds the module once deps has installed the headers
# (and never beside it, as make -j would).
demo: deps
	$(MAKE) modules
	tools/testing/vm/run --timeout 300 tools/demo.sh

# Debian packages siw-dkms and siw-ibverbs-provider (debian/) in build/deb/,
# checked by lintian; Documentation/admin-guide.rst.
deb:
	tools/mkdeb

install: modules libsiw
	$(MAKE) $(KBUILD_ARGS) INSTALL_MOD_DIR=updates modules_install
	depmod -a $(KVER)
	$(MAKE) -C tools/libsiw O=$(BUILD)/libsiw install

uninstall:
	rm -f /lib/modules/$(KVER)/updates/siw.ko
	depmod -a $(KVER)
	$(MAKE) -C tools/libsiw O=$(BUILD)/libsiw uninstall

clean:
	-$(MAKE) $(KBUILD_ARGS) clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod clean
	-$(MAKE) -C tests/unit clean
	-$(MAKE) -C tests/fuzz clean
	rm -rf $(BUILD)
