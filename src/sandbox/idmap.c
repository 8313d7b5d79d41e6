/* idmap.c - a root caller's --project DIR as an idmapped mount (idmap.h).
 * Called as root, the sandbox's uids are SBX_ROOT_HOST_UID's, never host
 * root's: DIR's files (root's or a user's) would show up unmapped inside,
 * and the overlay could not copy them up. Host root clones DIR's mount
 * and idmaps it with a user namespace made for the purpose, whose one
 * mapping makes DIR's owner (and group) the sandbox's uid (and gid). */
#define _GNU_SOURCE
#include "sandbox/idmap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"
#include "sandbox/tier.h"
#include "sandbox/userns.h"

/* A user namespace mapping uid to to_uid and gid to to_gid, one id each:
 * a process is made in it, its maps written, the namespace kept by an fd,
 * and the process ends. */
static int map_userns(uid_t uid, gid_t gid, uid_t to_uid, gid_t to_gid, struct sbx_err *err)
{
	struct clone_args args = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
	int p[2], ns = -1;
	char path[64];

	if (pipe2(p, O_CLOEXEC) < 0)
		return err_sys(err, "pipe");
	pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0) { /* waits until its namespace is held, then ends */
		char c;
		close(p[1]);
		(void)!read(p[0], &c, 1);
		_exit(0);
	}
	close(p[0]);
	if (pid < 0) {
		err_sys(err, "create a user namespace");
		/* none can be made here (a container's seccomp: clone3 ENOSYS,
		 * clone EPERM): the landlock tier, which has no --project */
		if (errno == ENOSYS || errno == EPERM || errno == ENOSPC)
			tier_no_userns(err);
	} else if (userns_write_maps(pid, uid, to_uid, gid, to_gid, err) == 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		if ((ns = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			err_sys(err, "open '%s'", path);
	}
	close(p[1]);
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	return ns;
}

int idmap_project(const struct sbx_plan *plan, struct sbx_err *err)
{
	const char *dir = plan->project.src;
	struct stat st;
	_cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (dfd < 0 || fstat(dfd, &st) < 0)
		return err_sys(err, "--project: open '%s'", dir);
	if (st.st_dev != plan->project.dev || st.st_ino != plan->project.ino)
		return err_set(err, 0, "--project: '%s' was replaced since sbxrun checked it", dir);
	_cleanup_close_ int ns = map_userns(st.st_uid, st.st_gid, plan->host_uid, plan->host_gid, err);
	if (ns < 0)
		return err_wrap(err, "--project '%s': the user namespace of its idmapped mount", dir);
	/* not AT_RECURSIVE: an overlay's lower layer is one mount (a bind
	 * below DIR is not part of it for a user's run either) */
	_cleanup_close_ int tree = (int)syscall(SYS_open_tree, dfd, "",
						OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0)
		return err_sys(err, "--project '%s': clone its mount", dir);
	struct mount_attr idmap = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)ns };
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &idmap, sizeof(idmap)) < 0) {
		err_sys(err, "--project '%s': called as root, the sandbox sees it through an idmapped "
			"mount, which its file system does not allow here", dir);
		err_hint(err, "put the project on a file system that allows idmapped mounts (ext4, "
			 "xfs, btrfs; tmpfs from Linux 6.3), or run sbxrun as its owner");
		return -1;
	}
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0)
		return err_sys(err, "--project '%s': make its idmapped mount read-only", dir);
	return steal_fd(tree);
}
