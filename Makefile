# lk417: the Linux 4.17 merge window's systems on Debian's 6.12 kernel.
# Run as root on Debian 12; every target installs what it needs.
#
#   make run        boot our kernel in QEMU and run the demonstration
#   make test       build the kernel and run every test suite in QEMU
#   make test SUITE=smoke   one suite
#   make shell      interactive shell in the guest
#   make bench      benchmarks (make bench BENCH=name for one)
#   make stress     long runs on the debug (KASAN/lockdep) kernel
#   make tree       build/linux: git work tree of the patched kernel
#   make export-patches   write build/linux's commits to kernel/patches/
#   make tree-reset       discard build/linux's own commits and changes
#   make kernel / kernel-debug   just build
#   make checkpatch run scripts/checkpatch.pl --strict on every patch
#   make check-series   build the kernel after each patch of the series
#   make check-defconfig   build the series in x86_64 defconfig (with and
#                   without IA32_EMULATION) and each ADI header on its own
#   make fresh-check  debootstrap a fresh Debian 12 and run the two
#                   commands above in it as a new user would (about an hour)
#   make check-deps check that scripts/deps.sh installs every command,
#                   library and header the scripts, tests and benchmarks use
#   make check-distro   build the series with Debian's own amd64 config
#   make deb        Debian packages of that build (build/distro/*.deb)
#   make distro-root    a Debian 12 root with the package installed, and its
#                   ext4 image (build/distro/root.img)
#   make distro-test    the ADI suites on it, booted as Debian boots
#                   (APPEND="preempt=full": with full preemption)
#   make distro-shell   a login on that guest

SHELL := /bin/bash
S := scripts

.PHONY: help deps tree kernel kernel-debug run shell test bench stress \
	export-patches tree-reset checkpatch check-series check-defconfig check-deps fresh-check clean \
	check-distro deb distro-root distro-test distro-shell

help:
	@awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' Makefile

deps:
	@$(S)/deps.sh

tree: deps
	@$(S)/kernel-tree.sh

tree-reset: deps
	@$(S)/kernel-tree.sh --reset

kernel: tree
	@$(S)/kernel-build.sh default

kernel-debug: tree
	@$(S)/kernel-build.sh debug

export-patches:
	@$(S)/export-patches.sh

checkpatch: tree
	@$(S)/checkpatch.sh

check-series: kernel
	@$(S)/check-series.sh

check-defconfig: tree
	@$(S)/check-defconfig.sh

fresh-check: deps
	@$(S)/fresh-check.sh

# Debian's configuration, its package, and the package booted as Debian
# boots (README, "Running ADI on your own machine").  distro-root and
# distro-test use what the step before made and say so when it is missing.
check-distro: tree
	@$(S)/check-distro.sh

deb: check-distro
	@$(S)/distro-deb.sh

distro-root: deps
	@$(S)/distro-root.sh

distro-test: deps
	@$(S)/distro-test.sh $(if $(APPEND),--append "$(APPEND)") $(SUITE)

distro-shell: deps
	@$(S)/distro-run.sh --timeout 86400 --shell

# Reads the sources and the package lists only: no kernel tree needed.
check-deps:
	@$(S)/check-deps.sh

run: kernel
	@$(S)/demo.sh

shell: kernel
	@$(S)/qemu-run.sh --timeout 86400 $(QEMU_ARGS) --shell

test: kernel
	@$(S)/test.sh $(SUITE)

bench: kernel
	@$(S)/bench.sh $(BENCH)

stress: kernel-debug
	@$(S)/stress.sh

clean:
	rm -rf build/obj build/obj-debug build/tests build/runs build/test-results
