// SPDX-License-Identifier: GPL-2.0
/*
 * Create a BPF array map through the raw bpf(2) syscall, store a value and
 * read it back.  Built against the patched kernel's exported uapi headers,
 * so it also proves that headers_install worked.
 * Exit 0 when everything matched; prints what failed otherwise.
 */
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

int main(void)
{
	union bpf_attr attr;
	uint32_t key = 3;
	uint64_t value = 0x417417, readback = 0;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = sizeof(key);
	attr.value_size = sizeof(value);
	attr.max_entries = 8;
	fd = sys_bpf(BPF_MAP_CREATE, &attr);
	if (fd < 0) {
		perror("BPF_MAP_CREATE");
		return 1;
	}

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = fd;
	attr.key = (uintptr_t)&key;
	attr.value = (uintptr_t)&value;
	if (sys_bpf(BPF_MAP_UPDATE_ELEM, &attr)) {
		perror("BPF_MAP_UPDATE_ELEM");
		return 1;
	}
	attr.value = (uintptr_t)&readback;
	if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &attr)) {
		perror("BPF_MAP_LOOKUP_ELEM");
		return 1;
	}
	if (readback != value) {
		fprintf(stderr, "map returned %#llx, stored %#llx\n",
			(unsigned long long)readback, (unsigned long long)value);
		return 1;
	}
	close(fd);
	return 0;
}
