# gaudi_nic top-level Makefile.
#
# On the host every target re-runs itself inside the Debian 13 test root
# (tools/testenv/inroot.sh creates or reuses it); inside the root it does the
# real work.  The checkout is /src there and the build directory /build.
#
#   make          build kernel modules (Kbuild, W=1) and userspace (Meson)
#   make check    host tests in the root + VM tests in one guest boot
#   make demo     boot the VM, load the drivers, show what the stack does
#   make sparse   kernel build with C=1 (sparse)
#   make check-debug  only the debug-kernel lane (lockdep, KASAN, kmemleak)
#   make root     only create/refresh the cached test root
#   make ksft     only the kernel's drivers/net selftests (tests/ksft) in the VM
#   make clean    remove the build directory

SHELL := /bin/bash
.DEFAULT_GOAL := all

ifeq ($(wildcard /.gaudi_nic_root_ok),)
# ---------------------------------------------------------------- host side
INROOT := tools/testenv/inroot.sh

root:
	@tools/testenv/mkroot.sh >/dev/null

clean:
	rm -rf build

all check check-debug demo sparse kmod kmod-debug user bench ksft torch:
	@$(INROOT) $(MAKE) --no-print-directory -C /src $@ V=$(V)

.PHONY: root clean all check check-debug demo sparse kmod kmod-debug user bench ksft torch
else
# ---------------------------------------------------------------- root side
KVER ?= $(GAUDI_NIC_KVER)
KDIR ?= /lib/modules/$(KVER)/build
B := /build
KMOD := $(B)/kmod
# In build order: tests/rdma and tests/accel link against the hl-thunk
# installed in $(B)/prefix.
MESON_COMPONENTS := hl-thunk collectives tests/rdma tests/accel
# Kernel sources copied into the build directory: Kbuild writes its objects
# next to the sources, and the checkout must stay clean.
KSRC := Kbuild drivers include tests/kmod

all: kmod user ksft-build

# $(call ksync,DIR): the kernel sources into DIR, where Kbuild builds them
ksync = mkdir -p $(1) && rsync -a --delete --exclude '*.o' --exclude '*.ko' \
	--exclude '.*.cmd' --exclude '*.mod*' --exclude modules.order \
	--exclude Module.symvers --exclude .release \
	--relative $(wildcard $(KSRC)) $(1)/

kmod-sync:
	@$(call ksync,$(KMOD))

kmod: kmod-sync
	@echo "  KBUILD  modules for $(KVER) (W=1, -Werror)"
	@$(MAKE) --no-print-directory -C $(KDIR) M=$(KMOD) W=1 KCFLAGS=-Werror modules

sparse: kmod-sync
	@echo "  SPARSE  modules for $(KVER) (C=2)"
	@set -o pipefail; $(MAKE) --no-print-directory -C $(KDIR) M=$(KMOD) W=1 C=2 \
		KCFLAGS=-Werror modules 2>&1 | tee $(B)/sparse.log
	@if grep -E '(warning|error):' $(B)/sparse.log; then \
		echo "sparse: the lines above need fixing (log: build/sparse.log)"; exit 1; fi

# The debug kernel (tools/testenv/mkdbgkernel.sh: built once, cached in the
# root) and our modules built against it, in $(KDBG), with W=1 and sparse
# on every file (C=2).  Its release goes to $(KDBG)/.release for check.sh.
KDBG := $(B)/kmod-debug
kmod-debug:
	@set -eo pipefail; rel=$$(tools/testenv/mkdbgkernel.sh | tail -n1); \
	[ "$$(cat $(KDBG)/.release 2>/dev/null)" = "$$rel" ] || rm -rf $(KDBG); \
	$(call ksync,$(KDBG)); \
	echo "  KBUILD  modules for the debug kernel $$rel (W=1, -Werror, sparse)"; \
	$(MAKE) --no-print-directory -C /lib/modules/$$rel/build M=$(KDBG) W=1 C=2 \
		KCFLAGS=-Werror modules 2>&1 | tee $(KDBG)/build.log; \
	if grep -E '(warning|error):' $(KDBG)/build.log; then \
		echo "kmod-debug: the lines above need fixing (log: build/kmod-debug/build.log)"; exit 1; fi; \
	echo "$$rel" > $(KDBG)/.release

# Each userspace component is its own Meson project, built twice: with ASan
# and UBSan for the unit tests (<c>), and optimised for benchmarks, the demo
# and the VM (<c>-rel, installed into $(B)/prefix).  The rdma-core provider
# is built inside the rdma-core source of the installed version (it needs
# the private driver.h) and installed into $(B)/prefix too.  A component in a
# subdirectory builds in build/<dir-with-dashes> (tests/rdma: build/tests-rdma).
user: export PKG_CONFIG_PATH := $(B)/prefix/lib/pkgconfig
user:
	@set -e; for src in $(MESON_COMPONENTS); do c=$${src//\//-}; \
		echo "  MESON   $$src (ASan+UBSan: build/$$c; release: build/$$c-rel)"; \
		[ -f $(B)/$$c/build.ninja ] || meson setup $(B)/$$c $$src \
			--buildtype=debugoptimized -Dwerror=true -Dwarning_level=2 \
			-Db_sanitize=address,undefined -Db_lundef=false \
			>$(B)/$$c.setup.log 2>&1 || { cat $(B)/$$c.setup.log; exit 1; }; \
		ninja -C $(B)/$$c >$(B)/$$c.ninja.log 2>&1 || { cat $(B)/$$c.ninja.log; exit 1; }; \
		[ -f $(B)/$$c-rel/build.ninja ] || meson setup $(B)/$$c-rel $$src \
			--buildtype=release -Dwerror=true -Dwarning_level=2 \
			--prefix=$(B)/prefix --libdir=lib \
			>$(B)/$$c-rel.setup.log 2>&1 || { cat $(B)/$$c-rel.setup.log; exit 1; }; \
		ninja -C $(B)/$$c-rel install >$(B)/$$c-rel.ninja.log 2>&1 || \
			{ cat $(B)/$$c-rel.ninja.log; exit 1; }; \
	done
	@echo "  PROVIDER libgaudi-rdmav34.so (inside the rdma-core source in /opt/src)"
	@rdma-core/providers/gaudi/build.sh
	@install -D -m 0644 rdma-core/providers/gaudi/man/gaudi.7 $(B)/prefix/share/man/man7/gaudi.7
	@$(MAKE) --no-print-directory torch

# The PyTorch backend (package torch_gcoll), a C++17 extension against the
# root's libtorch, installed into $(B)/prefix/$(TORCH_PYDIR).
TORCH_PYDIR := lib/python3/dist-packages
torch: export PKG_CONFIG_PATH := $(B)/prefix/lib/pkgconfig
torch:
	@echo "  MESON   collectives/bindings/torch (torch_gcoll: build/torch)"
	@[ -f $(B)/torch/build.ninja ] || meson setup $(B)/torch collectives/bindings/torch \
		--prefix=$(B)/prefix -Dpython.platlibdir=$(B)/prefix/$(TORCH_PYDIR) \
		-Dpython.purelibdir=$(B)/prefix/$(TORCH_PYDIR) \
		>$(B)/torch.setup.log 2>&1 || { cat $(B)/torch.setup.log; exit 1; }
	@ninja -j2 -C $(B)/torch install >$(B)/torch.ninja.log 2>&1 || \
		{ cat $(B)/torch.ninja.log; exit 1; }

check: all kmod-debug
	@tools/testenv/check.sh

check-debug: all kmod-debug
	@tools/testenv/check.sh --debug-only

demo: all
	@tools/testenv/vm.sh --demo tools/testenv/demo.sh

bench: all
	@tools/testenv/bench.sh

# The kernel's own selftests (tests/ksft): installed into $(B)/ksft.
ksft-build:
	@tests/ksft/build.sh

# make ksft adds what make check leaves out for time (rss_ctx.py,
# ethtool_rmon.sh)
ksft: all
	@sed 's#tests/ksft/drivers-net.sh#env KSFT_FULL=1 &#' \
		tests/vm.d/40-ksft.list >$(B)/ksft.list
	@tools/testenv/vm.sh $(B)/ksft.list $(B)/results/ksft

.PHONY: all kmod kmod-sync kmod-debug sparse user check check-debug demo bench \
	ksft-build ksft torch
endif
