# Rules shared by the BPF tools and benchmarks.
#
# BPF side: compile NAME.bpf.c (in the directory make runs in) into
# $(OUT)/NAME.bpf.o and generate $(OUT)/NAME.skel.h from it.  Programs are
# built against the target kernel's exported uapi headers (KHDR), not a
# vmlinux.h: they read only uapi context structs, so they need no BTF.
#
# User side, when the includer sets TOOL: $(OUT)/$(TOOL) from TOOL_SRCS
# (default $(TOOL).c), after its skeleton, with one set of C flags for
# every tool; "make clean" removes what these rules made.
#
# The includer may set OUT, KHDR, TOOL, TOOL_SRCS, BPF_EXTRA_CFLAGS and
# SKEL_SUFFIX (the skeleton's struct is NAME$(SKEL_SUFFIX)) before the
# include; OUT defaults to build/tools/$(TOOL).
# The repository: from this file's own path, taken now (MAKEFILE_LIST grows).
ifndef TOP
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
endif
KHDR ?= $(TOP)/build/obj/usr/include
OUT ?= $(TOP)/build/tools/$(TOOL)
# gcc unless the caller names a compiler (make's own default is cc).
ifeq ($(origin CC),default)
CC := gcc
endif
CFLAGS ?= -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror
LDLIBS ?= -lbpf -lelf -lz -ljson-c
CLANG ?= clang
BPFTOOL ?= bpftool
# The target kernel's uapi first (its union bpf_attr, its helper ids), then
# the multiarch directory for the <asm/...> glibc would pull in.
BPF_CFLAGS := -O2 -g -target bpf $(BPF_EXTRA_CFLAGS) -Wall -Werror -isystem $(KHDR) \
	-I/usr/include/$(shell $(CC) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

ifdef TOOL
TOOL_SRCS ?= $(TOOL).c

all: $(OUT)/$(TOOL)

$(OUT)/$(TOOL): $(TOOL_SRCS) $(wildcard *.h) $(OUT)/$(TOOL).skel.h
	$(CC) $(CFLAGS) -isystem $(KHDR) -I$(OUT) -I. -o $@ $(TOOL_SRCS) $(LDLIBS)

clean:
	rm -f $(OUT)/$(TOOL) $(OUT)/$(TOOL).bpf.o $(OUT)/$(TOOL).skel.h

.PHONY: all clean
endif

$(OUT)/%.bpf.o: %.bpf.c $(wildcard *.h) | $(OUT)
	$(CLANG) $(BPF_CFLAGS) -I. -c -o $@ $<

# The skeleton embeds the object; it is generated, never committed.
$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)$(SKEL_SUFFIX) > $@.tmp && mv $@.tmp $@

$(OUT):
	mkdir -p $@
