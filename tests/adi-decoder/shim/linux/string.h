/* Shim for <linux/string.h>: adi_classify_insn() only memset()s its result. */
#include <string.h>
