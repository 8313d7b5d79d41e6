/* preload.c - a library for LD_PRELOAD whose constructor says where it ran
 * (tests/vm/guest-deb.sh, tests/integration/14-hostchild.sh): when
 * SBX_PRELOAD_OUT names a file, it appends one line, "comm=NAME
 * label=LABEL secure=AT_SECURE userns=made|ERROR", where userns is what
 * unshare(CLONE_NEWUSER) gave a fork of the process: code the caller
 * injects into sbxrun, and what it could do there. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

static void read_line(const char *path, char *out, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, out, size - 1);

	out[n > 0 ? n : 0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	if (fd >= 0)
		close(fd);
}

__attribute__((constructor)) static void preloaded(void)
{
	const char *path = getenv("SBX_PRELOAD_OUT");
	char label[256], comm[64];
	int status = 0;

	if (!path)
		return;
	read_line("/proc/self/attr/current", label, sizeof(label));
	read_line("/proc/self/comm", comm, sizeof(comm));
	pid_t pid = fork();
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : errno);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		status = EIO << 8;
	FILE *f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "comm=%s label=%s secure=%lu userns=%s\n", comm, label[0] ? label : "-",
		getauxval(AT_SECURE), WEXITSTATUS(status) ? strerror(WEXITSTATUS(status)) : "made");
	fclose(f);
}
