# sanitize_mem: build the vanilla and the patched linux-source-6.12, boot
# every cell of the policy matrix under QEMU, and judge what they print.
#
#   make          install what is missing, build, boot the matrix, summary
#   make check    the same plus the test suites; last line "N passed, N failed"
#   make help     every target

SHELL := /bin/sh
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:

TOP      := $(CURDIR)
B        := $(TOP)/build
STAMP    := $(B)/stamp
SRC      := $(B)/src
OBJ      := $(B)/obj
RESULTS  := $(B)/results
RAMDIR   := $(B)/ram
PRISTINE := $(SRC)/linux-6.12
PATCHED  := $(SRC)/linux-patched

JOBS    ?= $(shell nproc)
TIMEOUT ?= 300
MATRIX  ?= policy/matrix
# The table the lifetime cells are judged against, and their channels.
LIFETIME_TABLE ?= policy/lifetime
CHANNELS ?= tests/scan/channels

# Debian packages the build, the guest and the harness need.
PACKAGES := linux-source-6.12 linux-config-6.12 qemu-system-x86 busybox-static expect \
	gcc gcc-12-plugin-dev libc6-dev make ccache bc bison flex libelf-dev \
	libssl-dev cpio dwarves xz-utils git python3 perl kmod stress-ng \
	python3-jinja2 python3-yaml python3-matplotlib \
	pinentry-curses kcapi-tools cryptsetup-bin ncurses-base hostapd wpasupplicant \
	trinity util-linux
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# The python3 whose modules those packages install (python3-jinja2,
# python3-yaml, python3-matplotlib), not one earlier on PATH (pyenv, a
# virtualenv) that lacks them or has others from PyPI.
export PATH := /usr/bin:$(PATH)

export CCACHE_DIR ?= $(B)/ccache
# Depend mode: a miss compiles once, without the extra preprocessor run
# ccache's default mode makes to hash the preprocessed text.  On a fresh
# machine, where every compilation of the kernels is a miss, compiling
# mm/, kernel/ and fs/ of the lab kernel took 148 s without ccache, 254 s
# with ccache's default mode and 172 s in depend mode (-j2, empty cache);
# a second build is served from the cache the same (14 s).
export CCACHE_DEPEND := 1
# Both trees sit at the same depth under build/, so with this base the
# compiler command lines of the two kernels are the same and ccache shares.
export CCACHE_BASEDIR := $(B)
export SRC STAMP
export PATCHES := $(TOP)/src-patches
# The harness's library is the package tests/harness/ (its command line:
# python3 -m harness); the scripts make runs find it, and the bench's
# modules, through this.
export PYTHONPATH := $(TOP)/tests
# make's $(shell) does not see exported variables (GNU make before 4.4).
HARNESS := PYTHONPATH=$(TOP)/tests python3 -m harness

# Every kernel is named in policy/kernels (tree x flavour, its fragments)
# and built in build/obj/<name>/; the distro flavours take Debian's own
# values for the areas of Kconfig-fragments/distro.areas from this file.
DEBIAN_CONFIG ?= /usr/src/linux-config-6.12/config.amd64_none_amd64.xz
export DEBIAN_CONFIG
# The kernels to build: those the matrix, the harness's own cells and the
# bench boot (make kernel KERNELS="lab-patched" builds just one).
KERNELS ?= $(shell $(HARNESS) kernels --matrix $(MATRIX) \
	--matrix tests/selftest/broken.matrix --bench policy/bench)
# A kernel's architecture (policy/kernels) and boot image (policy/arches).
arch_of = $(shell eval "$$($(HARNESS) kernel $(1))" && echo $$arch)
image = $(OBJ)/$(1)/$(shell $(HARNESS) arch $(call arch_of,$(1)) image)

INITRD := $(B)/initramfs.cpio
RAMSCAN := $(B)/tools/ramscan
# Guest tests: static C programs and busybox shell scripts, installed in the
# initramfs under their name without extension.
GUEST_C_PROGRAMS := $(patsubst tests/guest/%.c,%,$(wildcard tests/guest/*.c)) lifetime
# The shell tests print KTAP through one helper they source
# (tests/guest/lib/ktap.sh, installed beside them as ktap.sh).
GUEST_SCRIPTS := $(patsubst tests/guest/%.sh,$(B)/guest/%,$(wildcard tests/guest/*.sh)) \
	$(B)/guest/ktap.sh $(wildcard tests/selftest/guest/*)
GUEST_PROGRAMS := $(addprefix $(B)/guest/,$(GUEST_C_PROGRAMS)) $(GUEST_SCRIPTS)
# The arm64 guest (make check-arm64): the same programs cross-compiled,
# Debian's arm64 busybox-static, no Debian programs of the host.
INITRD_ARM64 := $(B)/initramfs-arm64.cpio
BUSYBOX_ARM64 := $(B)/arm64/busybox
GUEST_PROGRAMS_ARM64 := $(addprefix $(B)/guest-arm64/,$(GUEST_C_PROGRAMS)) $(GUEST_SCRIPTS)
PACKAGES_ARM64 := $(shell $(HARNESS) arch arm64 packages)
GUEST_CC_ARM64 := $(shell $(HARNESS) arch arm64 guest-cc)

CELLS = $(shell $(HARNESS) cells --matrix $(MATRIX))

# What every cell run needs to know, passed to tests/harness/run-cell.sh.
CELL_ENV = OBJ=$(OBJ) \
	INITRD=$(INITRD) INITRD_ARM64=$(INITRD_ARM64) RAMDIR=$(RAMDIR) TIMEOUT=$(TIMEOUT) RAMSCAN=$(RAMSCAN) \
	CHANNELS=$(TOP)/$(CHANNELS) LIFETIME_TABLE=$(TOP)/$(LIFETIME_TABLE) \
	ACCEL=$$(cat $(B)/accel 2>/dev/null || echo tcg)

# The suites of boots (policy/suites): those make check runs, and the
# summary's parts for the ones with a results folder of their own.  The
# harness steps of make check, each of which must leave a result (one that
# crashes before writing it is a failure): their folders under RESULTS.
CHECK_STEPS = $(UNIT_SUITES) uml harness fastpath bench-smoke lava
CHECK_SUITES := $(shell $(HARNESS) suites --check yes)
CHECK_PARTS := SUMMARY_PARTS="$(shell $(HARNESS) suites --check yes --summary-parts)"

.PHONY: all check deps deps-arm64 initramfs-arm64 trees pristine kernel \
	initramfs accel qemu-backports matrix boot cell unit judge harness-tests scanner-tests \
	config-diff lifetime lifetime-real fastpath bench bench-smoke docs-results uml bench-uml \
	lava-jobs lava-smoke matrix-real mutants refresh series-check series-whole mbox mbox-check clean \
	distclean help summary reset-results

## install missing packages, build every kernel and the initramfs, boot
## every suite of make check (policy/suites), print a summary
all: kernel initramfs accel
	@$(MAKE) --no-print-directory reset-results
	@for s in $(CHECK_SUITES); do $(MAKE) --no-print-directory suite-cells-$$s; done; \
	$(MAKE) --no-print-directory summary $(CHECK_PARTS)

# The tests that need no kernel run first, so a broken harness shows in
# seconds; then the KUnit suite under User-Mode Linux (make uml: its own
# kernel, a minute or two warm), so a change that breaks ARCH=um is red
# before the QEMU kernels are built; a kernel that does not build still
# ends in the summary line.  With SUITE=, one suite of policy/suites alone.
## all of make plus the harness tests; ends "N passed, N failed".
## SUITE=name: one suite of policy/suites alone, with its own summary
## (make check SUITE=debug, or make check-debug; build/results/<results>/)
check:
ifneq ($(SUITE),)
	@a=$$($(HARNESS) suite $(SUITE)) || exit 2; eval "$$a"; \
	$(HARNESS) check || exit 1; \
	$(MAKE) --no-print-directory $$needs || exit 1; \
	$(MAKE) --no-print-directory kernel \
		KERNELS="$$($(HARNESS) kernels --matrix $$matrix | tr '\n' ' ')" || exit 1; \
	out=$(RESULTS); [ "$$results" = . ] && $(MAKE) --no-print-directory reset-results || out=$(RESULTS)/$$results; \
	$(MAKE) --no-print-directory suite-cells-$(SUITE); \
	$(MAKE) --no-print-directory summary RESULTS=$$out SUMMARY_MATRIX=$$matrix
else
	@$(MAKE) --no-print-directory reset-results
	@$(MAKE) --no-print-directory unit || \
		echo "check: make unit failed (see above); carrying on, the summary counts it" >&2
	@$(MAKE) --no-print-directory uml || \
		echo "check: make uml failed (see above); carrying on, the summary counts it" >&2
	@$(MAKE) --no-print-directory kernel initramfs accel || { \
		echo "check: a kernel or the initramfs did not build (see above)" >&2; \
		$(MAKE) --no-print-directory summary; exit 1; }
	@$(MAKE) --no-print-directory config-diff CONFIG_DIFF_FLAGS=--brief
	@for s in $(CHECK_SUITES); do $(MAKE) --no-print-directory suite-cells-$$s; done; \
	$(MAKE) --no-print-directory harness-tests; \
	$(MAKE) --no-print-directory fastpath; \
	$(MAKE) --no-print-directory bench-smoke; \
	$(MAKE) --no-print-directory lava-smoke; \
	$(MAKE) --no-print-directory summary $(CHECK_PARTS) SUMMARY_STEPS="$(CHECK_STEPS)"
endif

## make check SUITE=<name>, for each suite of policy/suites (listed below)
check-%:
	@$(MAKE) --no-print-directory check SUITE=$*

# Boot the cells of one suite without building: its matrix, table and
# channel list, results in its folder (a folder of its own starts empty),
# the variables it needs exported with paths from the top.
suite-cells-%:
	@a=$$($(HARNESS) suite $*) || exit 2; eval "$$a"; \
	out=$(RESULTS); [ "$$results" = . ] || { out=$(RESULTS)/$$results; rm -rf $$out; mkdir -p $$out; }; \
	for kv in $$env; do export "$${kv%%=*}=$(TOP)/$${kv#*=}"; done; \
	$(MAKE) --no-print-directory matrix MATRIX=$$matrix RESULTS=$$out \
		LIFETIME_TABLE=$$lifetime CHANNELS=$$channels

## boot the cells of policy/matrix-real (the real programs' channels) into
## build/results/real/ without rebuilding
matrix-real: suite-cells-real

## only the channels driven by real Debian programs (pinentry, kcapi-enc,
## cryptsetup, hostapd; in make check too): build/results/real/lifetime.md
lifetime-real: check-real

# The MTE cells boot on Debian backports' QEMU (qemu-boot/backports-qemu.sh
# says why), fetched into build/ once.
QEMU_BACKPORTS := $(B)/qemu-backports/root/usr/bin/qemu-system-aarch64
$(QEMU_BACKPORTS): qemu-boot/backports-qemu.sh
	@qemu-boot/backports-qemu.sh $(B)/qemu-backports >/dev/null
	@touch $@
qemu-backports: $(QEMU_BACKPORTS)

## every target with a line of its own (from the ## comments of the Makefile)
help:
	@awk '/^## / { d = d (d ? "\n" : "") substr($$0, 4); next } \
	     d && /^[a-z][a-z0-9%-]*:/ { t = substr($$0, 1, index($$0, ":") - 1); \
		n = split(d, l, "\n"); printf "make %-18s %s\n", t, l[1]; \
		for (i = 2; i <= n; i++) printf "%-23s %s\n", "", l[i] } { d = "" }' $(MAKEFILE_LIST)
	@echo "Suites (policy/suites; make check-<suite>): $$($(HARNESS) suites | tr '\n' ' ')"
	@echo "  not in make check: $$($(HARNESS) suites --check no | tr '\n' ' ')"
	@echo 'Variables: JOBS, TIMEOUT (s per cell), MATRIX, SUITE, ACCEL=tcg|kvm (skip the probe),'
	@echo '           KERNELS="name ..." (make kernel)'

# --- packages ----------------------------------------------------------------

# Checked on every run (a few dpkg queries), installed only when missing.
## install the Debian packages that are missing
deps:
	@SUDO=$(SUDO) tests/harness/deps.sh $(PACKAGES)
deps-arm64: deps
	@SUDO=$(SUDO) tests/harness/deps.sh $(PACKAGES_ARM64)

# --- kernel trees and builds -------------------------------------------------

## unpack linux-source-6.12 and apply src-patches/series
trees: deps
	@tests/series/trees.sh patched

# The pristine tree alone (the initramfs needs its usr/gen_init_cpio.c and
# must not re-apply the series under a running kernel build).
pristine: deps
	@tests/series/trees.sh pristine

# One kernel build at a time (a lock in build/stamp/): two makes building
# into the same object directory corrupt each other's dependency files.
## build the kernels of policy/kernels the matrix and bench use (out of
## tree, ccache; KERNELS="name ..." for some); an unchanged one is skipped
kernel: deps
	@OBJ=$(OBJ) PRISTINE=$(PRISTINE) PATCHED=$(PATCHED) JOBS=$(JOBS) MATRIX=$(MATRIX) \
		tests/kernel/build-kernels.sh $(KERNELS)

# Every option of the distro areas where a built kernel differs from
# Debian's configuration, and why (build/results/config-diff/<kernel>.txt).
## every distro-area option where a distro kernel differs from Debian's
## config, and why
config-diff: kernel
	@OBJ=$(OBJ) PRISTINE=$(PRISTINE) PATCHED=$(PATCHED) OUT=$(RESULTS)/config-diff \
		tests/kernel/config-diff.sh $(CONFIG_DIFF_FLAGS) $(KERNELS)

# --- initramfs ----------------------------------------------------------------

$(B)/tools/gen_init_cpio: | pristine
	@mkdir -p $(@D)
	gcc -O2 -o $@ $(PRISTINE)/usr/gen_init_cpio.c

# The guest's list of channels is the host's (tests/scan/channels), as a
# header made at build time.
GUEST_GEN := $(B)/guest-gen
$(GUEST_GEN)/channels.h: tests/scan/channels tests/guest/channels-h.py tests/harness/policy.py
	@mkdir -p $(@D)
	python3 tests/guest/channels-h.py tests/scan/channels > $@.tmp
	mv $@.tmp $@
$(GUEST_GEN)/channels-real.h: tests/scan/channels-real tests/guest/channels-h.py tests/harness/policy.py
	@mkdir -p $(@D)
	python3 tests/guest/channels-h.py --real tests/scan/channels-real > $@.tmp
	mv $@.tmp $@

# The bench's workloads are the host's (policy/bench-workloads), the same way.
$(GUEST_GEN)/bench-workloads.h: policy/bench-workloads tests/guest/bench-workloads-h.py \
		tests/harness/policy.py
	@mkdir -p $(@D)
	python3 tests/guest/bench-workloads-h.py policy/bench-workloads > $@.tmp
	mv $@.tmp $@
# The guest's C programs for one architecture: $(1) their directory under
# build/, $(2) the compiler (static), $(3) the target that installs it.
# lifetime is a program of several files (tests/guest/lifetime/lifetime.h
# says which does what); a channel of the list without its ch_<id> function
# does not link.
LIFETIME_SRC := $(wildcard tests/guest/lifetime/*.c)
define guest_programs
$(B)/$(1)/bench: $(GUEST_GEN)/bench-workloads.h
$(B)/$(1)/%: tests/guest/%.c $(wildcard tests/guest/*.h) $(GUEST_GEN)/channels.h | $(3)
	@mkdir -p $$(@D)
	$(2) -static -O2 -Wall -Wextra -Werror -o $$@ $$< -Itests/guest -I$(GUEST_GEN)
$(B)/$(1)/lifetime: $(LIFETIME_SRC) $(wildcard tests/guest/lifetime/*.h) $(wildcard tests/guest/*.h) \
		$(GUEST_GEN)/channels.h $(GUEST_GEN)/channels-real.h | $(3)
	@mkdir -p $$(@D)
	$(2) -static -O2 -Wall -Wextra -Werror -o $$@ $(LIFETIME_SRC) -Itests/guest/lifetime \
		-Itests/guest -I$(GUEST_GEN)
endef
$(eval $(call guest_programs,guest,gcc,deps))
# The same programs for the arm64 guest, with Debian's cross compiler.
$(eval $(call guest_programs,guest-arm64,$(GUEST_CC_ARM64),deps-arm64))

$(B)/guest/%: tests/guest/%.sh
	@mkdir -p $(@D)
	cp $< $@
$(B)/guest/ktap.sh: tests/guest/lib/ktap.sh
	@mkdir -p $(@D)
	cp $< $@

# Debian programs copied from the host with their libraries (stress-ng, trinity):
# the list, and each listed program that exists (a missing one is named,
# with its package, by mkinitramfs.sh).
HOST_PROGRAM_FILES := $(wildcard $(shell qemu-boot/mkinitramfs.sh --host-programs))

$(INITRD): qemu-boot/init qemu-boot/mkinitramfs.sh qemu-boot/host-programs $(HOST_PROGRAM_FILES) \
		$(GUEST_PROGRAMS) $(B)/tools/gen_init_cpio
	qemu-boot/mkinitramfs.sh qemu-boot/init /bin/busybox $(GUEST_PROGRAMS) > $@.list
	$(B)/tools/gen_init_cpio $@.list > $@.tmp
	mv $@.tmp $@

## build the guest initramfs (busybox + guest programs)
initramfs: deps
	@$(MAKE) --no-print-directory $(INITRD) $(RAMSCAN)

$(BUSYBOX_ARM64): qemu-boot/foreign-busybox.sh | deps-arm64
	SUDO=$(SUDO) qemu-boot/foreign-busybox.sh arm64 $@

$(INITRD_ARM64): qemu-boot/init qemu-boot/mkinitramfs.sh $(BUSYBOX_ARM64) $(GUEST_PROGRAMS_ARM64) \
		$(B)/tools/gen_init_cpio
	HOST_PROGRAMS= qemu-boot/mkinitramfs.sh qemu-boot/init $(BUSYBOX_ARM64) \
		$(GUEST_PROGRAMS_ARM64) > $@.list
	$(B)/tools/gen_init_cpio $@.list > $@.tmp
	mv $@.tmp $@

initramfs-arm64: deps-arm64
	@$(MAKE) --no-print-directory $(INITRD_ARM64) $(RAMSCAN)

# The host's view of guest RAM: counts each secret's copies in the RAM file.
$(RAMSCAN): tests/scan/ramscan.c tests/guest/secrets.h
	@mkdir -p $(@D)
	gcc -O2 -Wall -Wextra -Werror -Itests/guest -o $@ $<

# KVM only where a short probe boot proves it works; ACCEL= overrides.
accel: kernel initramfs
	@ACCEL=$(ACCEL) qemu-boot/accel.sh $(B)/accel $(call image,lab-vanilla) $(INITRD)

# --- the matrix -----------------------------------------------------------------

# A run of the matrix starts from no cells, so the summary never counts a
# stale one.  What the standalone jobs wrote (make bench: ~25 minutes of
# boots; make series-check; make mbox) is not a cell and stays, so that
# make lifetime or make check after make bench does not lose it.
KEEP_RESULTS := $(filter-out .,$(shell $(HARNESS) suites --field results)) mutants bench bench-uml bench-uml.md bench.md bench.json bench.svg series-check.txt series-whole sanitize_mem.mbox sanitize_mem.mbox.head
reset-results:
	@mkdir -p $(RESULTS)
	@find $(RESULTS) -mindepth 1 -maxdepth 1 \
		$(foreach k,$(KEEP_RESULTS),! -name '$(k)') -exec rm -rf {} +

## boot every cell of MATRIX (JOBS at once) without rebuilding
matrix:
	@echo "matrix: $(words $(CELLS)) cells from $(MATRIX), $(JOBS) at a time"
	@$(MAKE) --no-print-directory -k -j$(JOBS) $(addprefix run-cell-,$(CELLS)) || \
		echo "matrix: the harness itself failed on a cell (see above)" >&2

run-cell-%:
	@$(CELL_ENV) tests/harness/run-cell.sh $(MATRIX) $* $(RESULTS)

# The attacker's view alone: the cells that scan guest RAM, and their table.
## only the cells that count secrets left in guest RAM, and their table
## build/results/lifetime.md
lifetime: kernel initramfs accel
	@$(MAKE) --no-print-directory reset-results
	@$(MAKE) --no-print-directory matrix \
		CELLS="$$(python3 -m harness cells --matrix $(MATRIX) --test guest:lifetime)"; \
	$(MAKE) --no-print-directory summary SUMMARY_MATRIX=
	@echo "lifetime: build/results/lifetime.md"

## boot one cell and judge it: make cell CELL=name
cell: kernel initramfs accel
	@[ -n "$(CELL)" ] || { echo "usage: make cell CELL=name (one of: $(CELLS))" >&2; exit 2; }
	@mkdir -p $(RESULTS)
	@$(CELL_ENV) tests/harness/run-cell.sh $(MATRIX) $(CELL) $(RESULTS)

# The judge run again on what the last boots left (console.log, status,
# lifetime.json of each cell) without booting: a change to the judge,
# policy/matrix's expectations or policy/lifetime checked in seconds.  The
# broken cells of make harness-tests too, when make check left them.
## judge again the saved console logs of build/results/<cell>/ without
## booting, and rewrite the summary (MATRIX=, RESULTS= as for make matrix)
judge:
	@python3 -m harness judge --matrix $(MATRIX) --results $(RESULTS) \
		--lifetime $(LIFETIME_TABLE)
	@tests/selftest/judge-cells.sh $(HARNESS_CELLS) $(RESULTS); \
	$(MAKE) --no-print-directory summary

# SUMMARY_PARTS: dir=matrix pairs, results of other matrices in
# $(RESULTS)/dir counted in the same summary (make check: real=...).
SUMMARY_MATRIX = $(MATRIX)
SUMMARY_PARTS ?=
SUMMARY_STEPS ?=
summary:
	@python3 -m harness summary --results $(RESULTS) $(if $(SUMMARY_MATRIX),--matrix $(SUMMARY_MATRIX)) \
		$(foreach p,$(SUMMARY_PARTS),--part $(p)) $(foreach s,$(SUMMARY_STEPS),--step $(s))

POLICY ?= full
KERNEL ?= lab-patched
BOOT_ARCH = $(call arch_of,$(KERNEL))
## boot a guest with a shell on this terminal (exit to power off):
## POLICY=full [ARGS=...] [KERNEL=lab-patched|<any of policy/kernels>]
boot: kernel initramfs accel
	@[ "$(BOOT_ARCH)" = x86_64 ] || $(MAKE) --no-print-directory initramfs-$(BOOT_ARCH)
	@ACCEL=$$(cat $(B)/accel) ARCH=$(BOOT_ARCH) qemu-boot/boot.sh $(KERNEL) $(call image,$(KERNEL)) \
		$(if $(filter arm64,$(BOOT_ARCH)),$(INITRD_ARM64),$(INITRD)) \
		$(RAMDIR)/boot.ram $(POLICY) "$(ARGS)"

# --- the harness's own tests ----------------------------------------------------

# Every harness test that needs no kernel and no QEMU, in seconds on a fresh
# clone with nothing built: the loader of policy/ (tests/selftest/test_policy.py),
# the judge on the saved logs of tests/selftest/logs/ and the expect driver
# on a fake guest (tests/selftest/test_harness.py without --cells), the
# LAVA jobs against golden files (tests/selftest/test_lava.py), the
# bench's host side (tests/bench/test_report.py: the channel checks catch a
# lost or damaged line) and the RAM scanner on made-up RAM files
# (tests/scan/test-ramscan.sh: uses build/tools/ramscan and
# build/guest/lifetime when they are up to date, else builds its own with
# gcc), make kernel's stamp with a make that only records its calls
# (tests/selftest/test_build_stamp.py), and the UML runner against a fake
# kunit.py (tests/uml/test_uml.py: a failed build, a hung build, a broken
# expectation turn it red), and the guest programs' parsers on saved and
# made-up output, run by the guest's shell, busybox sh
# (tests/selftest/test_guest.py).  Each suite prints KTAP to
# build/results/<suite>/ktap.log, which becomes its result.json, counted
# by the summary.
UNIT_SUITES := policy-loader harness-parser lava-jobs bench-parser scanner build-stamp uml-runner \
	mutants-runner guest-parser
UNIT_policy-loader := python3 tests/selftest/test_policy.py -v
UNIT_harness-parser := python3 tests/selftest/test_harness.py -v
UNIT_lava-jobs := python3 tests/selftest/test_lava.py -v
UNIT_bench-parser := python3 tests/bench/test_report.py -v
UNIT_uml-runner := python3 tests/uml/test_uml.py -v
UNIT_mutants-runner := python3 tests/mutants/test_mutants.py -v
UNIT_scanner = RAMSCAN=$(RAMSCAN) LIFETIME=$(B)/guest/lifetime bash tests/scan/test-ramscan.sh
UNIT_build-stamp := python3 tests/selftest/test_build_stamp.py -v
UNIT_guest-parser := python3 tests/selftest/test_guest.py -v
# The LAVA jobs are rendered with Debian's Jinja2 and read back with its
# YAML, the bench plot with its matplotlib, the guest's parsers run by its
# busybox: all make unit may need to install.
## the harness tests that need no kernel (policy/ loader, judge on saved
## logs, expect driver, LAVA jobs, bench parser, RAM scanner, the kernel
## stamp, the UML runner, the guest's parsers): seconds, nothing built
unit:
	@$(MAKE) --no-print-directory deps PACKAGES="python3-jinja2 python3-yaml python3-matplotlib \
		busybox-static"
	@$(MAKE) --no-print-directory -k $(addprefix unit-,$(UNIT_SUITES))

unit-%:
	@[ -n "$(UNIT_$*)" ] || { echo "unit: no suite $* (one of: $(UNIT_SUITES))" >&2; exit 2; }
	@mkdir -p $(RESULTS)/$*
	@$(UNIT_$*) > $(RESULTS)/$*/ktap.log 2>&1; \
	python3 -m harness ktap --name $* --log $(RESULTS)/$*/ktap.log --out $(RESULTS)/$*

# Cells that hang, panic, warn or miss a suite on purpose must be reported
# as failed with the right reason (the parser itself is tested on saved
# logs by make unit).
HARNESS_CELLS := $(B)/harness-cells
## boot cells that hang, panic or warn on purpose and check the harness
## judges them failed for the right reason
harness-tests: kernel initramfs accel
	@rm -rf $(HARNESS_CELLS)
	@$(MAKE) --no-print-directory matrix MATRIX=tests/selftest/broken.matrix \
		RESULTS=$(HARNESS_CELLS) TIMEOUT=120
	@python3 tests/selftest/test_harness.py --cells $(HARNESS_CELLS) \
		--matrix tests/selftest/broken.matrix --out $(RESULTS)/harness

# The RAM scanner on files with a known number of copies, without a guest,
# with the binaries of the initramfs (make unit runs it too, in make check).
## the RAM scanner with the initramfs's binaries (in make unit)
scanner-tests: initramfs
	@$(MAKE) --no-print-directory unit-scanner

# --- cost when disabled -----------------------------------------------------

# The fast paths of policy/fastpath, read from the machine code of both
# kernels: the free paths of the patched kernel with every key off must
# gain nothing over vanilla but jump-label NOPs; the allocation paths may
# call sanitize_mem_* but lose no inlining and no frame depth.
## compare the fast paths of the lab kernels (keys off; frames)
fastpath: kernel
	@python3 tests/kernel/fastpath.py $(OBJ)/lab-vanilla/vmlinux $(OBJ)/lab-patched/vmlinux \
		$(RESULTS)/fastpath

# --- mutants ---------------------------------------------------------------------

# Every mutation of policy/mutants applied alone to a worktree of the
# patched tree, its kernels rebuilt, the cells it names booted and judged:
# killed or survived (tests/mutants/mutants.py).  Not in make check (each
# mutant is a rebuild and a few boots).  The worktree and its objects sit
# in build/mut/ as build/src/linux-patched and build/obj/ sit in build/:
# the same relative paths, so ccache serves every file a mutation leaves
# alone.
MUTANTS ?=
## apply each mutation of policy/mutants alone, rebuild, boot the cells it
## names: killed or survived (build/results/mutants/; MUTANTS="name ..."
## for some of them, the others keep their last verdict); not in make check
mutants: kernel initramfs accel
	@$(HARNESS) check
	@PRISTINE=$(PRISTINE) JOBS=$(JOBS) python3 tests/mutants/mutants.py \
		--patched $(PATCHED) --tree $(B)/mut/src/linux-patched \
		--obj $(B)/mut/obj --out $(RESULTS)/mutants $(if $(MUTANTS),--only $(MUTANTS)) \
		--cell-env INITRD=$(INITRD) --cell-env RAMDIR=$(RAMDIR) --cell-env RAMSCAN=$(RAMSCAN) \
		--cell-env TIMEOUT=$(TIMEOUT) --cell-env ACCEL=$$(cat $(B)/accel 2>/dev/null || echo tcg)

# --- benchmarks -----------------------------------------------------------------

# Every configuration of policy/bench, one guest at a time: instruction-exact
# figures under -icount and wall-clock medians; ratios to vanilla in
# build/results/bench.{md,json,svg}; the wipe of free memory in the
# configurations of policy/bench-wipe, beside the host's memset
# (tests/uml/memset-bw.c).  Measures, never asserts on time.
BENCH_ENV = OBJ=$(OBJ) \
	INITRD=$(INITRD) RAMDIR=$(RAMDIR) OUT=$(RESULTS) MEMSET_BW=$(B)/tools/memset-bw
## benchmark every policy against vanilla and init_on_free, and the wipe
## of free memory (build/results/bench.md, .json, .svg); ~25 min
bench: kernel initramfs $(B)/tools/memset-bw
	@mkdir -p $(RESULTS)
	@$(BENCH_ENV) tests/bench/run-bench.sh

# make check: the bench must work, timing unjudged.  Its host side without
# a guest is tested by make unit (bench-parser/); here the boots of vanilla
# and off, off's microbenchmark boot and off's wipe of free memory (a
# 256 MiB guest, one round: about 15 s more), whose every workload and
# wipe step must report on an intact bench channel and every
# microbenchmark on the console; the first errors, naming configuration
# and workload, are the test's message.
## the bench on vanilla and off at a small scale (make check)
bench-smoke: kernel initramfs $(B)/tools/memset-bw
	@python3 -m harness verdict --out $(RESULTS)/bench-smoke \
		--cell bench-smoke --kernel both --log bench-smoke.md --test every_workload_reported \
		--message 'tests/bench/run-bench.sh --smoke (vanilla, off, off wipe); figures not judged' \
		--errors $(RESULTS)/bench-smoke.errors -- \
		env $(BENCH_ENV) tests/bench/run-bench.sh --smoke

# docs/results.md (and the bench plot) regenerated from the last runs of
# make lifetime / make check and make bench; a missing run is named.
## regenerate docs/results.md and the plots from the last runs
docs-results:
	@python3 -m harness docs --results $(RESULTS) --docs docs

# --- User-Mode Linux ---------------------------------------------------------

# The patched tree built for ARCH=um by the kernel's own kunit.py from the
# series' kunitconfigs, and booted natively on the host once per line of
# policy/uml (tests/uml/uml.py): the KUnit suite in seconds, so make check
# goes red when ARCH=um breaks; and the microbenchmark on the host CPU,
# where TCG -icount overweights rep stos.  UML_SRC: another patched tree
# (then build/src is left alone), UML_OBJ: kunit.py's build directory.
UML_SRC ?= $(PATCHED)
UML_OBJ ?= $(B)/uml
UML_ARGS = --src $(UML_SRC) --build-dir $(UML_OBJ) --jobs $(JOBS)
UML_TREE = $(if $(filter $(PATCHED),$(UML_SRC)),trees,deps)
## the KUnit suite under User-Mode Linux, built by kunit.py, once per
## policy of policy/uml (make check; build/results/uml/)
uml: $(UML_TREE)
	@python3 tests/uml/uml.py kunit $(UML_ARGS) --out $(RESULTS)/uml

$(B)/tools/memset-bw: tests/uml/memset-bw.c
	@mkdir -p $(@D)
	gcc -O2 -Wall -Wextra -Werror -o $@ $<

## the microbenchmark under UML on the host CPU beside the memset floor
## (build/results/bench-uml/)
bench-uml: $(UML_TREE)
	@$(MAKE) --no-print-directory deps PACKAGES=python3-matplotlib
	@$(MAKE) --no-print-directory $(B)/tools/memset-bw
	@python3 tests/uml/uml.py bench $(UML_ARGS) --out $(RESULTS)/bench-uml --memset-bw $(B)/tools/memset-bw \
		--icount $(RESULTS)/bench.json --icount docs/results.md \
		--command "make bench-uml$(if $(filter $(PATCHED),$(UML_SRC)),, UML_SRC=$(UML_SRC))"
	@/usr/bin/python3 tests/uml/plot.py $(RESULTS)/bench-uml/results.json \
		$(RESULTS)/bench-uml/plot.svg
	@cp $(RESULTS)/bench-uml/table.md $(RESULTS)/bench-uml.md

# --- test farms ---------------------------------------------------------------

# One LAVA job per cell of policy/matrix, and one of them run end to end
# with the dispatcher's standalone lava-run on this machine.
## one LAVA job definition per cell, in build/lava/jobs/
lava-jobs:
	@python3 lava/make-jobs.py --out $(B)/lava/jobs

LAVA_CELL ?= vanilla
## run one generated job with lava-run (LAVA_CELL=vanilla)
lava-smoke: kernel initramfs
	@python3 -m harness verdict --out $(RESULTS)/lava \
		--cell lava --kernel lab-vanilla --log ../lava/out/$(LAVA_CELL)/console.log \
		--test smoke.$(LAVA_CELL) \
		--message 'lava-run of the generated job for cell $(LAVA_CELL) (build/lava/out/$(LAVA_CELL)/results.txt)' \
		-- lava/lava-smoke.sh $(LAVA_CELL)

# --- patches ----------------------------------------------------------------------

## write the commits of build/src/linux-patched to src-patches/
refresh:
	@tests/series/trees.sh refresh

# Bisectability: every patch applies, passes checkpatch --strict and builds
# (KTAP in build/results/series-check.txt); then the whole-series checks.
# Both run even if the first fails; the target fails if either does.
## apply the series patch by patch: checkpatch --strict + build each,
## then make series-whole
series-check: trees
	@# checkpatch.pl's SPDX check of new files runs scripts/spdxcheck.py.
	@$(MAKE) --no-print-directory deps PACKAGES="python3-ply python3-git"
	@start=$$(date +%s); rc=0; \
	OBJ=$(OBJ)/series JOBS=$(JOBS) LOG=$(RESULTS)/series-check.txt \
		FRAGMENTS="$$(python3 -m harness fragments lab-patched)" \
		tests/series/series-check.sh || rc=1; \
	$(MAKE) --no-print-directory series-whole || rc=1; \
	echo "series-check: $$( [ $$rc -eq 0 ] && echo passed || echo FAILED) in $$(( $$(date +%s) - start )) s" \
		"($(RESULTS)/series-check.txt, $(RESULTS)/series-whole/ktap.log)"; \
	exit $$rc

# The whole-series checks of series-check alone (KTAP): CONFIG_SANITIZE_MEM=n
# builds and its flags are 0, no new W=1 or sparse warning in the files the
# series touches, i386 HIGHMEM (pages reached through kmap) and arm64 build.
# Needs the lab-patched kernel (the =y control).
## CONFIG_SANITIZE_MEM=n build, flags 0 without it, no new W=1 or sparse
## warning in the touched files, i386 HIGHMEM and arm64 builds (KTAP)
series-whole: trees
	@$(MAKE) --no-print-directory deps PACKAGES="sparse gcc-aarch64-linux-gnu"
	@$(MAKE) --no-print-directory kernel KERNELS=lab-patched
	@OBJ=$(OBJ)/series-whole PRISTINE=$(PRISTINE) PATCHED=$(PATCHED) JOBS=$(JOBS) \
		LOG=$(RESULTS)/series-whole/ktap.log \
		FRAGMENTS="$$(python3 -m harness fragments lab-patched)" \
		MTE_FRAGMENTS="$$(python3 -m harness fragments arm64-mte-patched)" tests/series/series-whole.sh

# The series as one mbox with a cover letter, for git send-email.
## the series and a cover letter as build/results/sanitize_mem.mbox
mbox: trees
	@mkdir -p $(RESULTS)
	@RESULTS=$(RESULTS) tests/series/mbox.sh $(RESULTS)/sanitize_mem.mbox

# The mbox read back as b4 reads it, applied with git am to the pristine
# tree in a clone under /tmp: the result must be the linux-patched commit
# the mbox was made from.
# Local only (no network once b4 is installed), 15 to 45 s here; not in make
# check, which builds no mbox.
## read that mbox back with b4 and git am it onto pristine (KTAP)
mbox-check: mbox
	@$(MAKE) --no-print-directory deps PACKAGES=b4
	@tests/series/mbox-check.sh $(RESULTS)/sanitize_mem.mbox

# --- cleaning -----------------------------------------------------------------------

## remove build outputs and results (keeps trees and ccache)
clean:
	rm -rf $(OBJ) $(RESULTS) $(RAMDIR) $(B)/guest $(B)/tools $(B)/initramfs.cpio* \
		$(B)/accel $(HARNESS_CELLS)

## remove build/ entirely
distclean:
	rm -rf $(B)
