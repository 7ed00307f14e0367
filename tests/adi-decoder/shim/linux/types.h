/* Shim for <linux/types.h>: the uapi __u8... types, plus the kernel's short names. */
#ifndef ADI_SHIM_LINUX_TYPES_H
#define ADI_SHIM_LINUX_TYPES_H
/* The system's uapi header: asm/byteorder.h (pulled in by insn.h) needs its __u32/__le32. */
#include_next <linux/types.h>
#include <stdbool.h>
#include <stdint.h>
/* adi_insn.c returns -EOPNOTSUPP; glibc's value (95) is the kernel's. */
#include <errno.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
#endif
