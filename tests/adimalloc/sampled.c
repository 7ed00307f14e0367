// SPDX-License-Identifier: GPL-2.0
/*
 * Sampled mode.
 *   sampled rate TRIALS   fork TRIALS children; each allocates 48 bytes,
 *                         writes one byte past the end and frees.  Prints how many
 *                         children were stopped by a report (exit status 86).
 *   sampled busy ROUNDS   heap buffers through write()/read() and plain
 *                         loads and stores, for the suite to count the
 *                         kernel's ADI checks around it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;

	if (argc > 2 && !strcmp(argv[1], "rate")) {
		long caught = 0, other = 0;

		for (long i = 0; i < n; i++) {
			int status;
			pid_t pid = fork();

			if (pid == 0) {
				volatile char *p = malloc(48);

				/* Caught at the access when the block ends its
				 * slot, else by free() in the slack. */
				p[48] = 1;
				free((void *)p);
				_exit(0);
			}
			waitpid(pid, &status, 0);
			if (WIFEXITED(status) && WEXITSTATUS(status) == 86)
				caught++;
			else if (!WIFEXITED(status) || WEXITSTATUS(status))
				other++;
		}
		printf("caught %ld of %ld (other failures %ld)\n", caught, n, other);
		return other ? 1 : 0;
	}
	if (argc > 2 && !strcmp(argv[1], "busy")) {
		int fd = open("/dev/null", O_WRONLY), fds[2];
		unsigned long sum = 0;

		if (fd < 0 || pipe(fds))
			return 1;
		for (long i = 0; i < n; i++) {
			char *p = malloc(256);

			memset(p, (int)i, 256);
			for (int k = 0; k < 256; k += 8)
				sum += (unsigned char)p[k];
			if (write(fd, p, 256) != 256 || write(fds[1], p, 64) != 64 ||
			    read(fds[0], p, 64) != 64)
				return 1;
			free(p);
		}
		printf("busy %lu\n", sum);
		return 0;
	}
	fprintf(stderr, "usage: sampled rate TRIALS | sampled busy ROUNDS\n");
	return 2;
}
