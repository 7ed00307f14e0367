// SPDX-License-Identifier: GPL-2.0
/*
 * rawtp: count, stream and stack-sample kernel tracepoints with
 * BPF_PROG_TYPE_RAW_TRACEPOINT programs attached by BPF_RAW_TRACEPOINT_OPEN.
 *
 * One program is loaded and attached once per tracepoint; each attachment
 * carries the tracepoint's index as its BPF cookie.  Closing the returned
 * fds (at exit, or when the process dies) detaches everything.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>

#include "ksyms.h"
#include "raw_tp_open.h"
#include "rawtp.h"
#include "rawtp.skel.h"

#define TP_NAME_MAX 128

static const char usage_text[] =
"Usage: rawtp [OPTIONS] TRACEPOINT...  [-- COMMAND [ARG...]]\n"
"       rawtp --list [PATTERN]\n"
"\n"
"Attach a raw tracepoint BPF program (BPF_RAW_TRACEPOINT_OPEN) to each\n"
"TRACEPOINT (e.g. sched_switch, sys_enter, task_rename; a \"group:name\"\n"
"form such as sched:sched_switch is accepted too) and count its events per\n"
"tracepoint and per process (pid and comm).  Runs until --duration ends, the\n"
"COMMAND exits, or SIGINT/SIGTERM; everything is detached on exit.\n"
"\n"
"Options:\n"
"  -l, --list          list tracepoints that have a trace event (from tracefs\n"
"                      available_events; per-syscall events are left out: their\n"
"                      raw tracepoints are sys_enter and sys_exit) and exit;\n"
"                      PATTERN keeps names that contain it\n"
"  -d, --duration SEC  stop after SEC seconds (default: until interrupted)\n"
"  -i, --interval SEC  print counts every SEC seconds (default 1; 0: only at\n"
"                      the end)\n"
"  -p, --pid PID       count only events raised by process PID\n"
"  -j, --json          print JSON lines instead of tables: {\"type\":\"counts\"}\n"
"                      every interval, {\"type\":\"event\"} per streamed event,\n"
"                      {\"type\":\"stack\"} and a final {\"type\":\"summary\"}\n"
"  -t, --top N         rows of the per-process table and number of stacks\n"
"                      shown per tracepoint (default 10; 0: all)\n"
"  -a, --args N        stream the first N raw arguments (0-12) of every event\n"
"                      through a perf buffer (bpf_perf_event_output); the\n"
"                      kernel refuses the attach (EINVAL) when a tracepoint has\n"
"                      fewer than N arguments.  Lost events are counted.\n"
"  -s, --str-arg I     stream argument I (0-11) read as a kernel string\n"
"                      (e.g. 1 for task_rename's new comm); also refused at\n"
"                      attach when the tracepoint has no argument I\n"
"  -k, --stacks        collect kernel stacks (bpf_get_stackid) and print the\n"
"                      most frequent ones at exit, symbolized with\n"
"                      /proc/kallsyms\n"
"  -v, --verbose       print libbpf's messages (verifier log on a load error)\n"
"  -h, --help          this text\n"
"\n"
"With \"-- COMMAND\", rawtp starts COMMAND once the programs are attached,\n"
"counts only its process (its threads, not its children) and stops when it\n"
"exits; exec itself renames the task, so task_rename sees one event for it.\n"
"If rawtp stops first (--duration, a signal), COMMAND keeps running.\n"
"While events are streamed (--args, --str-arg) and the output is text, the\n"
"count tables are printed only at the end.\n"
"\n"
"Exit status: 0 on success, 1 on a runtime error (load, attach, privilege),\n"
"2 on a usage error.  Needs root (CAP_BPF and CAP_PERFMON).\n";

static struct {
	const char *tps[RAWTP_MAX_TP];
	int ntp;
	double duration;	/* seconds; 0 = unlimited */
	double interval;
	unsigned int pid;
	bool json;
	int top;
	int nargs;
	int str_arg;
	bool stacks;
	bool verbose;
	char **command;
} opt = { .interval = 1.0, .top = 10, .str_arg = -1 };

static volatile sig_atomic_t stop_signal;
static unsigned long long lost_events;
static int ncpus;

static void on_signal(int sig)
{
	stop_signal = sig;
}

__attribute__((format(printf, 1, 2), noreturn))
static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("rawtp: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'rawtp --help'.\n", stderr);
	exit(2);
}

__attribute__((format(printf, 1, 2)))
static void error(const char *fmt, ...)
{
	va_list ap;

	fputs("rawtp: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const char *errname(int err)
{
	static char buf[32];
	const char *n = strerrorname_np(err);

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "errno %d", err);	/* kernel-internal */
	return buf;
}

static double parse_seconds(const char *s, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0 || v > 1e7)
		usage_error("%s: '%s' is not a number of seconds", what, s);
	return v;
}

static long parse_long(const char *s, const char *what, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		usage_error("%s: '%s' is not an integer in %ld..%ld", what, s, lo, hi);
	return v;
}

/* Accept "name" or "group:name"; the raw tracepoint is named by "name". */
static const char *tp_name(const char *arg)
{
	const char *name = strchr(arg, ':');
	const char *c;

	name = name ? name + 1 : arg;
	if (!*name || strlen(name) >= TP_NAME_MAX)
		usage_error("'%s' is not a tracepoint name", arg);
	for (c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			usage_error("'%s' is not a tracepoint name (letters, digits, '_')",
				    arg);
	return name;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- --list ------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_tracepoints(const char *pattern)
{
	static const char *paths[] = {
		"/sys/kernel/tracing/available_events",
		"/sys/kernel/debug/tracing/available_events",
	};
	char line[512], **names = NULL;
	size_t n = 0, cap = 0, i;
	FILE *f = NULL;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]) && !f; i++)
		f = fopen(paths[i], "r");
	if (!f) {
		error("cannot read available_events (%s): is tracefs mounted at /sys/kernel/tracing?",
		      strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *name;

		line[strcspn(line, "\n")] = 0;
		if (!colon)
			continue;
		*colon = 0;
		name = colon + 1;
		/* syscalls:sys_enter_* are ftrace's, built on raw_syscalls */
		if (!strcmp(line, "syscalls"))
			continue;
		if (pattern && !strstr(name, pattern) && !strstr(line, pattern))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			names = realloc(names, cap * sizeof(*names));
			if (!names) {
				error("out of memory");
				return 1;
			}
		}
		if (asprintf(&names[n], "%s:%s", line, name) < 0) {
			error("out of memory");
			return 1;
		}
		n++;
	}
	fclose(f);
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		printf("%s\n", strchr(names[i], ':') + 1);
		free(names[i]);
	}
	free(names);
	return 0;
}

/* ---- kallsyms ---------------------------------------------------------- */

static struct ksyms ksyms;

/* Without symbols stacks stay numeric: say why, and go on. */
static void load_kallsyms(void)
{
	int err = ksyms_load(&ksyms);

	if (err)
		error("cannot read /proc/kallsyms: %s", strerror(-err));
	else if (ksyms.hidden)
		error("/proc/kallsyms shows no addresses (kptr_restrict?): stacks stay numeric");
}

static void symbolize(unsigned long long addr, char *buf, size_t len)
{
	const struct ksym *sym = ksyms_find(&ksyms, addr);

	if (!sym)
		snprintf(buf, len, "0x%llx", addr);
	else
		snprintf(buf, len, "%s+0x%llx", sym->name, addr - sym->addr);
}

/* ---- output helpers ---------------------------------------------------- */

/*
 * A JSON string of @s, at most @max bytes.  comm and string arguments are
 * bytes, not UTF-8: each byte is read as the code point of the same value
 * (Latin-1), so that the output stays valid JSON whatever a task names
 * itself.
 */
static struct json_object *json_bytes(const char *s, size_t max)
{
	char buf[2 * (RAWTP_STR_LEN > RAWTP_COMM_LEN ? RAWTP_STR_LEN : RAWTP_COMM_LEN) + 1];
	size_t i, n = 0;

	for (i = 0; i < max && s[i] && n + 2 < sizeof(buf); i++) {
		unsigned char c = s[i];

		if (c < 0x80) {
			buf[n++] = (char)c;
		} else {
			buf[n++] = (char)(0xc0 | c >> 6);
			buf[n++] = (char)(0x80 | (c & 0x3f));
		}
	}
	return json_object_new_string_len(buf, (int)n);
}

/* Print @o as one line and free it. */
static void json_print(struct json_object *o)
{
	if (!o) {
		fprintf(stderr, "rawtp: out of memory for the JSON output\n");
		exit(1);
	}
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void json_set(struct json_object *o, const char *key, struct json_object *v)
{
	json_object_object_add(o, key, v);
}

static void text_str(FILE *out, const char *s, size_t max)
{
	size_t i;

	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = s[i];

		fputc(isprint(c) && c != ' ' ? c : '?', out);
	}
}

/* ---- counts ------------------------------------------------------------ */

struct task_row {
	struct rawtp_task_key key;
	unsigned long long count;
};

static unsigned long long read_total(int fd, __u32 slot)
{
	unsigned long long sum = 0;
	__u64 vals[ncpus];
	int i;

	if (bpf_map_lookup_elem(fd, &slot, vals))
		return 0;
	for (i = 0; i < ncpus; i++)
		sum += vals[i];
	return sum;
}

static int cmp_task_row(const void *a, const void *b)
{
	const struct task_row *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->key.tp != y->key.tp)
		return x->key.tp < y->key.tp ? -1 : 1;
	return x->key.pid < y->key.pid ? -1 : x->key.pid > y->key.pid;
}

static struct task_row *read_tasks(int fd, size_t *n)
{
	struct rawtp_task_key key, next;
	struct task_row *rows;
	size_t cap = 256;
	void *prev = NULL;
	__u64 count;

	*n = 0;
	rows = malloc(cap * sizeof(*rows));
	while (rows && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &count))
			continue;	/* deleted meanwhile: nothing to show */
		if (*n == cap) {
			struct task_row *r = realloc(rows, 2 * cap * sizeof(*rows));

			if (!r)
				break;
			rows = r;
			cap *= 2;
		}
		rows[*n].key = key;
		rows[*n].count = count;
		(*n)++;
	}
	if (rows)
		qsort(rows, *n, sizeof(*rows), cmp_task_row);
	return rows;
}

static void print_counts(struct rawtp *skel, double elapsed, double dt,
			 unsigned long long *prev, bool final)
{
	int tfd = bpf_map__fd(skel->maps.totals);
	unsigned long long tot[RAWTP_MAX_TP], dropped;
	struct task_row *rows;
	size_t n, i, shown;
	int t;

	for (t = 0; t < opt.ntp; t++)
		tot[t] = read_total(tfd, t);
	dropped = read_total(tfd, RAWTP_DROPPED_SLOT);
	rows = read_tasks(bpf_map__fd(skel->maps.tasks), &n);
	shown = opt.top && (size_t)opt.top < n ? (size_t)opt.top : n;

	if (opt.json) {
		struct json_object *o = json_object_new_object();
		struct json_object *tps = json_object_new_object();
		struct json_object *tasks = json_object_new_array();
		char text[32];

		snprintf(text, sizeof(text), "%.3f", elapsed);
		json_set(o, "type", json_object_new_string(final ? "summary" : "counts"));
		json_set(o, "elapsed", json_object_new_double_s(elapsed, text));
		for (t = 0; t < opt.ntp; t++)
			json_set(tps, opt.tps[t], json_object_new_uint64(tot[t]));
		json_set(o, "tracepoints", tps);
		for (i = 0; i < shown; i++) {
			struct json_object *row = json_object_new_object();

			json_set(row, "tracepoint", json_object_new_string(opt.tps[rows[i].key.tp]));
			json_set(row, "pid", json_object_new_uint64(rows[i].key.pid));
			json_set(row, "comm", json_bytes(rows[i].key.comm, RAWTP_COMM_LEN));
			json_set(row, "count", json_object_new_uint64(rows[i].count));
			json_object_array_add(tasks, row);
		}
		json_set(o, "tasks", tasks);
		json_set(o, "task_rows", json_object_new_uint64(n));
		json_set(o, "dropped", json_object_new_uint64(dropped));
		if (opt.nargs || opt.str_arg >= 0)
			json_set(o, "lost", json_object_new_uint64(lost_events));
		json_print(o);
	} else {
		if (!final && isatty(STDOUT_FILENO))
			printf("\033[H\033[J");	/* refresh in place */
		printf("rawtp: %.1f s%s\n", elapsed, final ? ", final counts" : "");
		printf("%-28s %14s %12s\n", "TRACEPOINT", "EVENTS", "PER SECOND");
		for (t = 0; t < opt.ntp; t++)
			printf("%-28s %14llu %12.0f\n", opt.tps[t], tot[t],
			       dt > 0 ? (tot[t] - prev[t]) / dt : 0.0);
		printf("\n%-28s %8s %-16s %14s\n", "TRACEPOINT", "PID", "COMM", "EVENTS");
		for (i = 0; i < shown; i++) {
			printf("%-28s %8u ", opt.tps[rows[i].key.tp], rows[i].key.pid);
			text_str(stdout, rows[i].key.comm, RAWTP_COMM_LEN);
			printf("%*s %14llu\n",
			       (int)(16 - strnlen(rows[i].key.comm, RAWTP_COMM_LEN)),
			       "", rows[i].count);
		}
		if (shown < n)
			printf("(%zu more rows; --top 0 shows all)\n", n - shown);
		if (dropped)
			printf("%llu events not counted per process: task map full\n",
			       dropped);
		if (opt.nargs || opt.str_arg >= 0)
			printf("lost events (perf buffer full): %llu\n", lost_events);
		printf("\n");
	}
	fflush(stdout);
	for (t = 0; t < opt.ntp; t++)
		prev[t] = tot[t];
	free(rows);
}

/* ---- stacks ------------------------------------------------------------ */

struct stack_row {
	struct rawtp_stack_key key;
	unsigned long long count;
};

static int cmp_stack_row(const void *a, const void *b)
{
	const struct stack_row *x = a, *y = b;

	if (x->key.tp != y->key.tp)
		return x->key.tp < y->key.tp ? -1 : 1;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static void print_stacks(struct rawtp *skel)
{
	int cfd = bpf_map__fd(skel->maps.stack_counts);
	int sfd = bpf_map__fd(skel->maps.stack_traces);
	struct rawtp_stack_key key, next;
	struct stack_row *rows = NULL;
	size_t n = 0, cap = 0, i, j;
	__u64 ips[RAWTP_STACK_DEPTH];
	void *prev = NULL;
	char sym[300];
	__u64 count;
	__u32 shown_tp = UINT32_MAX;
	int per_tp = 0;
	struct json_object *o = NULL, *frames = NULL;

	load_kallsyms();
	while (!bpf_map_get_next_key(cfd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(cfd, &key, &count))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			rows = realloc(rows, cap * sizeof(*rows));
			if (!rows)
				return;
		}
		rows[n].key = key;
		rows[n].count = count;
		n++;
	}
	qsort(rows, n, sizeof(*rows), cmp_stack_row);

	for (i = 0; i < n; i++) {
		struct stack_row *r = &rows[i];

		if (r->key.tp != shown_tp) {
			shown_tp = r->key.tp;
			per_tp = 0;
			if (!opt.json)
				printf("stacks of %s (most frequent first):\n",
				       opt.tps[r->key.tp]);
		}
		if (opt.top && per_tp++ >= opt.top)
			continue;
		if (opt.json) {
			o = json_object_new_object();
			json_set(o, "type", json_object_new_string("stack"));
			json_set(o, "tracepoint", json_object_new_string(opt.tps[r->key.tp]));
			json_set(o, "count", json_object_new_uint64(r->count));
		} else {
			printf("  %llu events", r->count);
		}
		if (r->key.stackid < 0) {
			/* bpf_get_stackid failed: -EEXIST/-ENOMEM etc. */
			if (opt.json) {
				json_set(o, "error", json_object_new_string(errname(-r->key.stackid)));
				json_print(o);
			} else {
				printf(": no stack (%s)\n", errname(-r->key.stackid));
			}
			continue;
		}
		memset(ips, 0, sizeof(ips));
		if (bpf_map_lookup_elem(sfd, &r->key.stackid, ips)) {
			if (opt.json) {
				json_set(o, "error", json_object_new_string("stack gone"));
				json_print(o);
			} else {
				printf(": stack %d gone\n", r->key.stackid);
			}
			continue;
		}
		frames = opt.json ? json_object_new_array() : NULL;
		if (!opt.json)
			printf(":\n");
		for (j = 0; j < RAWTP_STACK_DEPTH && ips[j]; j++) {
			symbolize(ips[j], sym, sizeof(sym));
			if (opt.json)
				json_object_array_add(frames, json_object_new_string(sym));
			else
				printf("    %s\n", sym);
		}
		if (opt.json) {
			json_set(o, "frames", frames);
			json_print(o);
		}
	}
	fflush(stdout);
	free(rows);
}

/* ---- streamed events --------------------------------------------------- */

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	const struct rawtp_event *e = data;
	__u32 i;

	(void)ctx;
	if (size < sizeof(*e) || e->tp >= (__u32)opt.ntp)
		return;
	if (opt.json) {
		struct json_object *o = json_object_new_object();
		struct json_object *args = json_object_new_array();
		char hex[24];

		json_set(o, "type", json_object_new_string("event"));
		json_set(o, "tracepoint", json_object_new_string(opt.tps[e->tp]));
		json_set(o, "cpu", json_object_new_int(cpu));
		json_set(o, "pid", json_object_new_uint64(e->pid));
		json_set(o, "tid", json_object_new_uint64(e->tid));
		json_set(o, "comm", json_bytes(e->comm, RAWTP_COMM_LEN));
		for (i = 0; i < e->nargs && i < RAWTP_MAX_ARGS; i++) {
			snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)e->args[i]);
			json_object_array_add(args, json_object_new_string(hex));
		}
		json_set(o, "args", args);
		if (opt.str_arg >= 0)
			json_set(o, "str", json_bytes(e->str, RAWTP_STR_LEN));
		json_print(o);
	} else {
		printf("%s cpu=%d pid=%u tid=%u comm=", opt.tps[e->tp], cpu,
		       e->pid, e->tid);
		text_str(stdout, e->comm, RAWTP_COMM_LEN);
		for (i = 0; i < e->nargs && i < RAWTP_MAX_ARGS; i++)
			printf(" arg%u=0x%llx", i, (unsigned long long)e->args[i]);
		if (opt.str_arg >= 0) {
			printf(" str%d=\"", opt.str_arg);
			text_str(stdout, e->str, RAWTP_STR_LEN);
			printf("\"");
		}
		printf("\n");
	}
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	(void)ctx;
	(void)cpu;
	lost_events += cnt;
}

/* ---- attach ------------------------------------------------------------ */

static void explain_attach_error(const char *name, int err)
{
	int need = opt.nargs;

	if (opt.str_arg + 1 > need)
		need = opt.str_arg + 1;
	if (err == ENOENT)
		error("no tracepoint '%s' in this kernel (%s); 'rawtp --list' shows them",
		      name, errname(err));
	else if (err == EINVAL && need)
		error("tracepoint '%s' has fewer than %d arguments: the kernel refused a program that reads args[%d] (%s)",
		      name, need, need - 1, errname(err));
	else if (err == EPERM || err == EACCES)
		error("attaching to '%s': permission denied (%s); run as root",
		      name, errname(err));
	else
		error("attaching to '%s': %s (%s)", name, strerror(err), errname(err));
}

static void explain_load_error(int err)
{
	if (err == EACCES)
		/* bpf(2) says EACCES when the verifier rejects a program */
		error("the verifier rejected the program (%s); -v shows its log",
		      errname(err));
	else if (err == EPERM)
		error("loading the BPF program: permission denied (%s); needs root, or CAP_BPF and CAP_PERFMON",
		      errname(err));
	else if (err == ENOSYS)
		error("this kernel has no bpf(2) (%s): it needs CONFIG_BPF_SYSCALL",
		      errname(err));
	else if (err == EINVAL || err == 524 /* kernel ENOTSUPP */ || err == EOPNOTSUPP)
		error("the kernel refused the raw tracepoint program (%s): it needs CONFIG_BPF_EVENTS and attach cookies (Linux 6.10 or later); -v shows the verifier log",
		      errname(err));
	else
		error("loading the BPF program: %s (%s); -v shows libbpf's log",
		      strerror(err), errname(err));
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	(void)level;
	/* without -v, explain_*_error() says what went wrong in one line */
	if (!opt.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* ---- main -------------------------------------------------------------- */

static void parse_args(int argc, char **argv, bool *list)
{
	static const struct option longopts[] = {
		{ "list", no_argument, NULL, 'l' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "top", required_argument, NULL, 't' },
		{ "args", required_argument, NULL, 'a' },
		{ "str-arg", required_argument, NULL, 's' },
		{ "stacks", no_argument, NULL, 'k' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, i, dashdash = -1;

	/* Everything after "--" is the command, untouched by getopt. */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			dashdash = i;
			break;
		}
	}
	if (dashdash > 0) {
		opt.command = argv + dashdash + 1;
		argv[dashdash] = NULL;
		argc = dashdash;
		if (!opt.command[0])
			usage_error("'--' must be followed by a command");
	}

	while ((c = getopt_long(argc, argv, "+ld:i:p:jt:a:s:kvh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'l':
			*list = true;
			break;
		case 'd':
			opt.duration = parse_seconds(optarg, "--duration");
			if (opt.duration == 0)
				usage_error("--duration must be more than 0");
			break;
		case 'i':
			opt.interval = parse_seconds(optarg, "--interval");
			break;
		case 'p':
			opt.pid = parse_long(optarg, "--pid", 1, INT_MAX);
			break;
		case 'j':
			opt.json = true;
			break;
		case 't':
			opt.top = parse_long(optarg, "--top", 0, INT_MAX);
			break;
		case 'a':
			opt.nargs = parse_long(optarg, "--args", 0, RAWTP_MAX_ARGS);
			break;
		case 's':
			opt.str_arg = parse_long(optarg, "--str-arg", 0,
						 RAWTP_MAX_ARGS - 1);
			break;
		case 'k':
			opt.stacks = true;
			break;
		case 'v':
			opt.verbose = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		default:
			fputs("Try 'rawtp --help'.\n", stderr);
			exit(2);
		}
	}
	if (*list) {
		if (argc - optind > 1)
			usage_error("--list takes at most one PATTERN");
		if (opt.command)
			usage_error("--list takes no command");
		return;
	}
	if (optind == argc)
		usage_error("name at least one tracepoint (rawtp --list shows them)");
	if (argc - optind > RAWTP_MAX_TP)
		usage_error("at most %d tracepoints", RAWTP_MAX_TP);
	for (i = optind; i < argc; i++) {
		int j;

		opt.tps[opt.ntp] = tp_name(argv[i]);
		for (j = 0; j < opt.ntp; j++)
			if (!strcmp(opt.tps[j], opt.tps[opt.ntp]))
				usage_error("tracepoint '%s' named twice", opt.tps[j]);
		opt.ntp++;
	}
	if (opt.pid && opt.command)
		usage_error("--pid and a command exclude each other");
}

/*
 * The command waits on a pipe until the programs are attached, so that
 * its first events are seen; its pid is the filter baked into the program.
 */
static pid_t start_command(int *go_fd)
{
	int p[2];
	pid_t pid;

	if (pipe(p)) {
		error("pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		error("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127);	/* rawtp failed before attaching */
		close(p[0]);
		execvp(opt.command[0], opt.command);
		fprintf(stderr, "rawtp: cannot run '%s': %s\n", opt.command[0],
			strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*go_fd = p[1];
	return pid;
}

/* The BPF object, opened with the options baked in and loaded; NULL: said why. */
static struct rawtp *load_program(void)
{
	struct rawtp *skel = rawtp__open();
	int err;

	if (!skel) {
		error("opening the BPF object: %s", strerror(errno));
		return NULL;
	}
	skel->rodata->target_pid = opt.pid;
	skel->rodata->nargs = opt.nargs;
	skel->rodata->str_arg = opt.str_arg;
	skel->rodata->nread = opt.str_arg + 1 > opt.nargs ? opt.str_arg + 1 : opt.nargs;
	skel->rodata->want_stacks = opt.stacks;
	if (!opt.stacks) {
		/* keep unused maps small: a stack map preallocates */
		bpf_map__set_max_entries(skel->maps.stack_traces, 1);
		bpf_map__set_max_entries(skel->maps.stack_counts, 1);
	}
	err = rawtp__load(skel);
	if (err) {
		explain_load_error(-err);
		rawtp__destroy(skel);
		return NULL;
	}
	return skel;
}

/* One link per tracepoint into @link_fd, its cookie the tracepoint's index. */
static bool attach_all(struct rawtp *skel, int *link_fd)
{
	int i;

	for (i = 0; i < opt.ntp; i++) {
		link_fd[i] = raw_tp_open(bpf_program__fd(skel->progs.rawtp_event),
					 opt.tps[i], i);
		if (link_fd[i] < 0) {
			explain_attach_error(opt.tps[i], errno);
			return false;
		}
	}
	return true;
}

/* The command rawtp runs (-- COMMAND): its pid, whether it ended, how. */
struct child {
	pid_t pid;
	bool done;
	int status;
};

/*
 * Count, and stream events through @pb (NULL: counts only), until the
 * duration is up, a signal arrives or the command ends; a table (or JSON
 * line) every interval.  -1 on a perf buffer error, said why.
 */
static int trace_loop(struct rawtp *skel, struct perf_buffer *pb, struct child *c,
		      unsigned long long *prev)
{
	double start = now(), last = start;
	double next_tick = opt.interval > 0 ? start + opt.interval : 0;
	double end = opt.duration > 0 ? start + opt.duration : 0;
	int err;

	while (!stop_signal) {
		double t = now(), wake = end;
		int ms;

		if (c->pid && !c->done && waitpid(c->pid, &c->status, WNOHANG) == c->pid)
			c->done = true;
		if (c->done || (end && t >= end))
			break;
		if (next_tick && t >= next_tick) {
			if (opt.json || !pb)
				print_counts(skel, t - start, t - last, prev, false);
			last = t;
			next_tick += opt.interval;
			if (next_tick < t)
				next_tick = t + opt.interval;
		}
		if (next_tick && (!wake || next_tick < wake))
			wake = next_tick;
		ms = wake ? (int)((wake - t) * 1000) + 1 : 1000;
		/* a command's exit is noticed within 100 ms */
		if (c->pid && ms > 100)
			ms = 100;
		if (pb) {
			err = perf_buffer__poll(pb, ms);
			if (err < 0 && err != -EINTR) {
				error("perf buffer poll: %s", strerror(-err));
				return -1;
			}
		} else {
			struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

			nanosleep(&ts, NULL);
		}
	}
	if (pb)
		perf_buffer__consume(pb);	/* what is left after the stop */
	print_counts(skel, now() - start, now() - last, prev, true);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long prev[RAWTP_MAX_TP] = { 0 };
	struct perf_buffer *pb = NULL;
	int link_fd[RAWTP_MAX_TP];
	struct rawtp *skel = NULL;
	struct child child = { 0 };
	bool list = false;
	int i, ret = 1, go_fd = -1;
	struct sigaction sa;

	parse_args(argc, argv, &list);
	if (list)
		return list_tracepoints(optind < argc ? argv[optind] : NULL);

	for (i = 0; i < RAWTP_MAX_TP; i++)
		link_fd[i] = -1;
	libbpf_set_print(libbpf_print);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		error("cannot count possible CPUs: %s", strerror(-ncpus));
		return 1;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: wake the poll */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (opt.command) {
		child.pid = start_command(&go_fd);
		if (child.pid < 0)
			return 1;
		opt.pid = child.pid;
	}

	skel = load_program();
	if (!skel || !attach_all(skel, link_fd))
		goto out;
	if (opt.nargs || opt.str_arg >= 0) {
		pb = perf_buffer__new(bpf_map__fd(skel->maps.events), 64,
				      on_sample, on_lost, NULL, NULL);
		if (!pb) {
			error("perf buffer: %s", strerror(errno));
			goto out;
		}
	}

	if (!opt.json && !opt.command)
		fprintf(stderr, "rawtp: attached to %d tracepoint%s; Ctrl-C to stop\n",
			opt.ntp, opt.ntp == 1 ? "" : "s");
	if (go_fd >= 0) {
		if (write(go_fd, "g", 1) != 1) {
			error("starting the command: %s", strerror(errno));
			goto out;
		}
		close(go_fd);
		go_fd = -1;
	}

	if (trace_loop(skel, pb, &child, prev))
		goto out;
	if (opt.stacks)
		print_stacks(skel);
	ret = 0;
	if (child.done && WIFEXITED(child.status) && WEXITSTATUS(child.status) == 127)
		ret = 1;	/* the command could not be run */
out:
	/* Closing the link fds is what detaches; destroy unloads. */
	for (i = 0; i < opt.ntp; i++)
		if (link_fd[i] >= 0)
			close(link_fd[i]);
	perf_buffer__free(pb);
	rawtp__destroy(skel);
	if (go_fd >= 0)
		close(go_fd);	/* the command sees EOF and exits 127 */
	if (child.pid > 0 && !child.done)
		waitpid(child.pid, &child.status, ret ? 0 : WNOHANG);
	return ret;
}
