/* limits_try.c - drives src/sandbox/limits.c around a real fork + user namespace, in
 * the order sandbox.c will (prepare, clone, attach, maps, apply_child, exec,
 * outcome, cleanup), so the module can be checked before `sbxrun run` uses it.
 *   make && cc -Isrc -o /tmp/limits_try tests/experiments/limits_try.c \
 *        $(ls build/*.o | grep -v main.o) $(pkg-config --libs json-c libcrypto ...)
 *   /tmp/limits_try MEMORY PIDS CPUS_MILLI strict|best CMD...
 * Prints the mechanisms, the command's wait status and the outcome. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include "base/config.h"
#include "sandbox/limits.h"
#include "base/log.h"

static void put(pid_t pid, const char *file, const char *s)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, s, strlen(s)) < 0)
		perror(path);
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	struct sbx_config cfg;
	struct sbx_limits lim;
	struct sbx_limits_outcome out;
	struct sbx_err err = { 0 };
	int go[2], ready[2], st;
	char c, map[64];

	if (argc < 6)
		return 2;
	sbx_log_level = SBX_LOG_VERBOSE;
	config_init(&cfg);
	cfg.memory = strtoull(argv[1], NULL, 0);
	cfg.pids = strtoull(argv[2], NULL, 0);
	cfg.cpus_milli = strtoull(argv[3], NULL, 0);
	cfg.enforce = !strcmp(argv[4], "strict") ? SBX_ENFORCE_STRICT : SBX_ENFORCE_BEST;
	cfg.open_files = 256;
	if (limits_prepare(&cfg, &lim, &err) < 0) {
		err_print(&err);
		return 125;
	}
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER) < 0) { perror("unshare"); _exit(125); }
		(void)!write(ready[1], "u", 1);
		if (read(go[0], &c, 1) != 1) _exit(125);
		if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0) { perror("setresuid"); _exit(125); }
		if (limits_apply_child(&cfg, &lim, &err) < 0) { err_print(&err); _exit(125); }
		execvp(argv[5], argv + 5);
		_exit(127);
	}
	if (limits_attach(&lim, pid, &err) < 0) {
		err_print(&err);
		kill(pid, SIGKILL);
	}
	if (read(ready[0], &c, 1) == 1) {
		unsigned uid = getuid() ? getuid() : 2147000000u;
		put(pid, "setgroups", "deny");
		snprintf(map, sizeof(map), "0 %u 1", uid);
		put(pid, "uid_map", map);
		put(pid, "gid_map", map);
		(void)!write(go[1], "g", 1);
	}
	waitpid(pid, &st, 0);
	limits_outcome(&lim, &out);
	limits_cleanup(&lim);
	printf("status: %s %d; oom_kills %d, pids_refused %d, peak %llu\n",
	       WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
	       (int)out.oom_kills, (int)out.pids_refused, (unsigned long long)out.peak_memory);
	printf("mechanisms: memory %s, pids %s, cpus %s, open_files %s\n",
	       limits_mechanism(&lim, SBX_K_MEMORY), limits_mechanism(&lim, SBX_K_PIDS),
	       limits_mechanism(&lim, SBX_K_CPUS), limits_mechanism(&lim, SBX_K_OPEN_FILES));
	return 0;
}
