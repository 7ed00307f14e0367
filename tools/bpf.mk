# Rules shared by the BPF tools and benchmarks: compile NAME.bpf.c (in the
# directory make runs in) into $(OUT)/NAME.bpf.o and generate
# $(OUT)/NAME.skel.h from it.  The includer sets OUT and KHDR (the target
# kernel's exported uapi headers), and may set BPF_EXTRA_CFLAGS and
# SKEL_SUFFIX (the skeleton's struct is NAME$(SKEL_SUFFIX)).
CLANG ?= clang
BPFTOOL ?= bpftool
# The target kernel's uapi first (its union bpf_attr, its helper ids), then
# the multiarch directory for the <asm/...> glibc would pull in.
BPF_CFLAGS := -O2 -g -target bpf $(BPF_EXTRA_CFLAGS) -Wall -Werror -isystem $(KHDR) \
	-I/usr/include/$(shell $(CC) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

$(OUT)/%.bpf.o: %.bpf.c $(wildcard *.h) | $(OUT)
	$(CLANG) $(BPF_CFLAGS) -I. -c -o $@ $<

# The skeleton embeds the object; it is generated, never committed.
$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)$(SKEL_SUFFIX) > $@.tmp && mv $@.tmp $@

$(OUT):
	mkdir -p $@
