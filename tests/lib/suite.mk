# Common rules for a suite's C programs, included by tests/<suite>/Makefile.
# The caller (scripts/test.sh) passes OUT (the suite's build directory) and
# KHDR (the patched kernel's exported uapi headers).
LIBDIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
# The suite's Makefile and this file: a changed flag rebuilds the programs.
SUITE_MAKEFILES := $(abspath $(MAKEFILE_LIST))
TOP := $(abspath $(LIBDIR)/../..)
OUT ?= $(TOP)/build/tests/$(notdir $(CURDIR))
KHDR ?= $(TOP)/build/obj/usr/include
CC ?= gcc
CFLAGS ?= -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror
CPPFLAGS += -isystem $(KHDR) -I$(LIBDIR) -I$(TOP)/lib
# Extra sources linked into every program of the suite (e.g. libadi).
EXTRA_SRCS ?=
PROGS_BIN := $(addprefix $(OUT)/,$(PROGS))

all: $(PROGS_BIN)

$(OUT)/%: %.c $(EXTRA_SRCS) $(wildcard $(LIBDIR)/*.h $(TOP)/lib/*.h $(TOP)/bench/lib/*.h *.h) $(SUITE_MAKEFILES) | $(OUT)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(EXTRA_SRCS) $(LDLIBS)

$(OUT):
	mkdir -p $@

.PHONY: all
