// SPDX-License-Identifier: GPL-2.0
/*
 * timeit FILE CMD [ARG...]: run CMD and write "SECONDS PEAK_KIB" to FILE
 * (wall time from fork to exit, CLOCK_MONOTONIC, in microseconds; the peak
 * RSS of CMD and the children it waited for, from wait4()); exit as CMD
 * did (128 + N when killed by signal N, 127 when it could not be run).
 * /usr/bin/time gives hundredths of a second, too coarse for glibc's runs
 * on small inputs, the denominators of every ratio.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	struct rusage ru;
	FILE *f;
	pid_t pid;
	int st;

	if (argc < 3) {
		fprintf(stderr, "usage: timeit FILE CMD [ARG...]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	if (pid < 0) {
		perror("timeit: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror("timeit: exec");
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) != pid) {
		perror("timeit: wait4");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%.6f %ld\n", (double)(b.tv_sec - a.tv_sec) +
			  (double)(b.tv_nsec - a.tv_nsec) / 1e9, ru.ru_maxrss) < 0 ||
	    fclose(f)) {
		perror("timeit: result file");
		return 2;
	}
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
