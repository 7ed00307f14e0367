// SPDX-License-Identifier: GPL-2.0
/*
 * lk417-features: show which of the Linux 4.17 systems this project builds
 * on are present in the running kernel, by using each one for real:
 * load and attach a raw-tracepoint program, attach an SK_MSG verdict to a
 * sockmap, attach cgroup bind/connect programs, and look for ext4.
 * Exit status: 0 when every feature worked, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "libadi.h"
#include "raw_tp_open.h"

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

/* Load "r0 = ret; exit" as a program of the given type. */
static int load_trivial(enum bpf_prog_type type,
			enum bpf_attach_type expected, int ret)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = ret },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.expected_attach_type = expected;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = 2;
	attr.license = (uintptr_t)"GPL";
	return sys_bpf(BPF_PROG_LOAD, &attr);
}

static int report(const char *what, int ok, const char *detail)
{
	printf("  [%s] %-44s %s\n", ok ? " ok " : "FAIL", what, detail);
	return ok;
}

static int raw_tracepoint(void)
{
	int prog, link, missing;
	char detail[96];

	prog = load_trivial(BPF_PROG_TYPE_RAW_TRACEPOINT, 0, 0);
	if (prog < 0)
		return report("raw tracepoint (BPF_RAW_TRACEPOINT_OPEN)", 0, strerror(errno));
	link = raw_tp_open(prog, "sys_enter", 0);
	missing = raw_tp_open(prog, "no_such_tracepoint", 0);
	snprintf(detail, sizeof(detail), "attached to sys_enter: %s; unknown name: %s",
		 link >= 0 ? "yes" : strerror(errno),
		 missing < 0 && errno == ENOENT ? "ENOENT" : "unexpected");
	if (link >= 0)
		close(link);
	close(prog);
	return report("raw tracepoint (BPF_RAW_TRACEPOINT_OPEN)", link >= 0 && missing < 0, detail);
}

static int sockmap_sk_msg(void)
{
	union bpf_attr attr;
	int map, prog, err;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_SOCKMAP;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 4;
	map = sys_bpf(BPF_MAP_CREATE, &attr);
	if (map < 0)
		return report("sockmap + SK_MSG verdict", 0, strerror(errno));
	prog = load_trivial(BPF_PROG_TYPE_SK_MSG, 0, SK_PASS);
	if (prog < 0) {
		close(map);
		return report("sockmap + SK_MSG verdict", 0, strerror(errno));
	}
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = map;
	attr.attach_bpf_fd = prog;
	attr.attach_type = BPF_SK_MSG_VERDICT;
	err = sys_bpf(BPF_PROG_ATTACH, &attr);
	close(prog);
	close(map);
	return report("sockmap + SK_MSG verdict", !err,
		      err ? strerror(errno) : "verdict program attached to a sockmap");
}

static int cgroup_sock_addr(void)
{
	static const struct { enum bpf_attach_type type; const char *name; } hooks[] = {
		{ BPF_CGROUP_INET4_BIND, "bind4" }, { BPF_CGROUP_INET6_BIND, "bind6" },
		{ BPF_CGROUP_INET4_CONNECT, "connect4" }, { BPF_CGROUP_INET6_CONNECT, "connect6" },
	};
	char detail[96] = "attached:";
	union bpf_attr attr;
	int cg, ok = 1;

	cg = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY);
	if (cg < 0)
		return report("cgroup bind/connect hooks", 0, "no cgroup v2 at /sys/fs/cgroup");
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		int prog = load_trivial(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, hooks[i].type, 1);

		memset(&attr, 0, sizeof(attr));
		attr.target_fd = cg;
		attr.attach_bpf_fd = prog;
		attr.attach_type = hooks[i].type;
		if (prog < 0 || sys_bpf(BPF_PROG_ATTACH, &attr)) {
			ok = 0;
		} else {
			strncat(detail, " ", sizeof(detail) - strlen(detail) - 1);
			strncat(detail, hooks[i].name, sizeof(detail) - strlen(detail) - 1);
			sys_bpf(BPF_PROG_DETACH, &attr);
		}
		if (prog >= 0)
			close(prog);
	}
	close(cg);
	return report("cgroup bind/connect hooks", ok, detail);
}

static int ext4(void)
{
	char line[128];
	int found = 0;
	FILE *f = fopen("/proc/filesystems", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "\text4\n"))
			found = 1;
	if (f)
		fclose(f);
	return report("ext4 (4.17 hardening checks)", found, found ? "registered" : "missing");
}

int main(void)
{
	struct utsname u;
	struct adi_caps caps;
	int ok = 1;

	uname(&u);
	printf("lk417 kernel %s\n4.17 systems in this kernel:\n", u.release);
	ok &= raw_tracepoint();
	ok &= sockmap_sk_msg();
	ok &= cgroup_sock_addr();
	ok &= ext4();
	/* The aux vectors' numbers come from the series' uapi <asm/auxvec.h>. */
	if (adi_get_caps(&caps) == 0)
		printf("  [info] %-44s available: %lu-byte blocks, %lu version bits\n", "ADI",
		       caps.block_size, caps.version_bits);
	else
		printf("  [info] %-44s not in this kernel (no AT_ADI_BLKSZ aux vector)\n", "ADI");
	return ok ? 0 : 1;
}
