/* hostfile.c - creating host files atomically and safely: an O_TMPFILE in
 * the target's directory linked into place on commit, or, where the
 * filesystem has no O_TMPFILE, a hidden temporary name that a small
 * registry lets a signal handler unlink (async-signal-safely) before the
 * signal is re-raised. The final name is never followed when a symlink. */
#define _GNU_SOURCE
#include "base/hostfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"

/* the unit test sets it to a flag that fails as a filesystem without
 * O_TMPFILE does, to test the fallback */
#ifndef HOSTFILE_TMPFILE_FLAG
#define HOSTFILE_TMPFILE_FLAG O_TMPFILE
#endif

/* Temporary names that exist on disk right now, for the signal handler.
 * used: 0 free, 2 being filled, 1 valid. */
#define SLOTS 32
static struct {
	volatile sig_atomic_t used;
	pid_t pid;
	int dirfd;
	int is_dir;
	char name[256];
} reg[SLOTS];

struct sbx_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* Removes a directory of plain files with async-signal-safe calls only
 * (getdents64 rather than readdir); a few passes, as entries unlinked while
 * the directory is read may move. */
static void remove_flat(int dirfd, const char *name)
{
	char buf[4096] __attribute__((aligned(8)));
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	for (int pass = 0; fd >= 0 && pass < 4; pass++) {
		long n;
		lseek(fd, 0, SEEK_SET);
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
			for (long off = 0; off < n; off += ((struct sbx_dirent64 *)(buf + off))->d_reclen) {
				const char *e = ((struct sbx_dirent64 *)(buf + off))->d_name;
				if (!(e[0] == '.' && (!e[1] || (e[1] == '.' && !e[2]))))
					unlinkat(fd, e, 0);
			}
		if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0)
			break;
	}
	if (fd >= 0)
		close(fd);
}

static void on_signal(int sig)
{
	int e = errno;
	pid_t me = getpid();

	for (int i = 0; i < SLOTS; i++) {
		if (reg[i].used != 1 || reg[i].pid != me)
			continue;
		if (reg[i].is_dir)
			remove_flat(reg[i].dirfd, reg[i].name);
		else
			unlinkat(reg[i].dirfd, reg[i].name, 0);
	}
	/* SA_RESETHAND made the action the default again: the signal, blocked
	 * while this runs, ends the process once the handler returns */
	raise(sig);
	errno = e;
}

/* Our handler where the signal would simply end the process (a handler or
 * SIG_IGN set by someone else is left alone). */
static void install_handlers(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	static int done;
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESETHAND | SA_RESTART }, old;

	if (done)
		return;
	done = 1;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
}

static int reg_add(int dirfd, const char *name, int is_dir)
{
	for (int i = 0; i < SLOTS; i++) {
		int free_slot = 0;
		if (!__atomic_compare_exchange_n(&reg[i].used, &free_slot, 2, false, __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST))
			continue;
		reg[i].pid = getpid();
		reg[i].dirfd = dirfd;
		reg[i].is_dir = is_dir;
		snprintf(reg[i].name, sizeof(reg[i].name), "%s", name);
		__atomic_store_n(&reg[i].used, 1, __ATOMIC_SEQ_CST);
		return i;
	}
	return -1;
}

static void reg_del(int *slot)
{
	if (*slot >= 0)
		__atomic_store_n(&reg[*slot].used, 0, __ATOMIC_SEQ_CST);
	*slot = -1;
}

static void block_signals(sigset_t *old)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGTERM);
	sigaddset(&s, SIGHUP);
	sigprocmask(SIG_BLOCK, &s, old);
}

/* The final name must be absent or a regular file: a symlink is refused,
 * not followed. what: the option that named it, or NULL. */
static int check_final(int dir, const char *name, const char *what, const char *path,
		       struct sbx_err *err)
{
	struct stat st;
	const char *sep = what ? " " : "";

	what = what ? what : "";
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : err_sys(err, "%s%s'%s'", what, sep, path);
	if (S_ISLNK(st.st_mode))
		return err_set(err, 0, "%s%s'%s': is a symbolic link (refusing to follow it)", what, sep, path);
	if (S_ISDIR(st.st_mode))
		return err_set(err, 0, "%s%s'%s': is a directory", what, sep, path);
	if (!S_ISREG(st.st_mode))
		return err_set(err, 0, "%s%s'%s': not a regular file", what, sep, path);
	return 0;
}

/* The directory holding path (an O_PATH fd) and its final component. */
static int open_parent(int dirfd, const char *path, char **name, const char *what,
		       struct sbx_err *err)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *sep = what ? " " : "";

	if (!base[0] || !strcmp(base, ".") || !strcmp(base, ".."))
		return err_set(err, 0, "%s%s'%s': not a file name", what ? what : "", sep, path);
	_cleanup_free_ char *dir = slash == path ? xstrdup("/")
				 : slash ? strndup(path, (size_t)(slash - path)) : xstrdup(".");
	int fd = openat(dirfd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return err_sys(err, "%s%s'%s'", what ? what : "", sep, dir);
	*name = xstrdup(base);
	return fd;
}

int hostfile_check(int dirfd, const char *path, const char *what, struct sbx_err *err)
{
	_cleanup_free_ char *name = NULL;
	_cleanup_close_ int dir = open_parent(dirfd, path, &name, what, err);

	return dir < 0 ? -1 : check_final(dir, name, what, path, err);
}

int hostfile_open_append(const char *path, const char *what, struct sbx_err *err)
{
	struct stat st;

	if (hostfile_check(AT_FDCWD, path, what, err) < 0)
		return -1;
	/* O_NONBLOCK: a FIFO put there meanwhile must not hang the open */
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK |
					   O_NOCTTY | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ELOOP)
		return err_set(err, 0, "%s '%s': is a symbolic link (refusing to follow it)", what, path);
	if (fd < 0)
		return err_sys(err, "%s '%s'", what, path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return err_set(err, 0, "%s '%s': not a regular file", what, path);
	fcntl(fd, F_SETFL, O_APPEND);
	return steal_fd(fd);
}

/* Links the unnamed file fd as name: through /proc (AT_EMPTY_PATH needs
 * CAP_DAC_READ_SEARCH before Linux 6.10), or directly where /proc is not
 * mounted. */
static int link_unnamed(int fd, int dirfd, const char *name)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	return errno == ENOENT ? linkat(fd, "", dirfd, name, AT_EMPTY_PATH) : -1;
}

/* A new hidden name beside name, created (or, with fd NULL, only chosen
 * and linked by the caller) and registered while signals are blocked. */
static int make_temp(struct sbx_hostfile *hf, mode_t mode, int *fd, char **out,
		     struct sbx_err *err)
{
	for (int tries = 0; tries < 64; tries++) {
		unsigned int rnd = 0;
		sigset_t old;
		if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
			rnd = (unsigned int)getpid() * 2654435761u + (unsigned int)tries;
		char *t = xasprintf(".%.200s.sbxrun-%08x", hf->name, rnd);
		block_signals(&old);
		int r = fd ? openat(hf->dirfd, t, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
			   : link_unnamed(hf->fd, hf->dirfd, t);
		int e = errno;
		if (r >= 0 && (hf->slot = reg_add(hf->dirfd, t, 0)) < 0) {
			if (fd)
				close(r);
			unlinkat(hf->dirfd, t, 0);
			r = -1, e = EMFILE;
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (r >= 0) {
			if (fd)
				*fd = r;
			*out = t;
			return 0;
		}
		free(t);
		if (e != EEXIST) {
			errno = e;
			return err_sys(err, "create a temporary file beside '%s'", hf->path);
		}
	}
	return err_set(err, EEXIST, "create a temporary file beside '%s'", hf->path);
}

int hostfile_open(struct sbx_hostfile *hf, int dirfd, const char *path, mode_t mode,
		  struct sbx_err *err)
{
	*hf = (struct sbx_hostfile){ .fd = -1, .dirfd = -1, .slot = -1 };
	hf->dirfd = open_parent(dirfd, path, &hf->name, NULL, err);
	if (hf->dirfd < 0)
		return -1;
	hf->active = true;
	hf->path = xstrdup(path);
	if (check_final(hf->dirfd, hf->name, NULL, path, err) < 0)
		goto fail;
	install_handlers();
	hf->fd = openat(hf->dirfd, ".", HOSTFILE_TMPFILE_FLAG | O_WRONLY | O_CLOEXEC, mode);
	if (hf->fd >= 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
		err_sys(err, "create '%s'", path);
		goto fail;
	}
	if (make_temp(hf, mode, &hf->fd, &hf->tmpname, err) == 0)
		return 0;
fail:
	hostfile_abort(hf);
	return -1;
}

/* The file under its final name, replacing what is there (never a symlink
 * planted since the open: rename would replace it, but refuse it as open
 * did). */
static int commit_replace(struct sbx_hostfile *hf, struct sbx_err *err)
{
	if (fsync(hf->fd) < 0)
		return err_sys(err, "write '%s'", hf->path);
	if (check_final(hf->dirfd, hf->name, NULL, hf->path, err) < 0)
		return -1;
	if (!hf->tmpname && make_temp(hf, 0, NULL, &hf->tmpname, err) < 0)
		return -1;
	if (renameat(hf->dirfd, hf->tmpname, hf->dirfd, hf->name) < 0)
		return err_sys(err, "rename to '%s'", hf->path);
	reg_del(&hf->slot);
	return 0;
}

static int commit_new(struct sbx_hostfile *hf, struct sbx_err *err)
{
	int r;

	if (!hf->tmpname) {
		r = link_unnamed(hf->fd, hf->dirfd, hf->name);
	} else if ((r = renameat2(hf->dirfd, hf->tmpname, hf->dirfd, hf->name, RENAME_NOREPLACE)) == 0) {
		reg_del(&hf->slot); /* the temporary name is gone with the rename */
	} else if (errno == EINVAL || errno == ENOSYS) {
		r = linkat(hf->dirfd, hf->tmpname, hf->dirfd, hf->name, 0);
	}
	if (r < 0 && errno == EEXIST)
		return err_set(err, 0, "'%s': already exists", hf->path);
	return r < 0 ? err_sys(err, "create '%s'", hf->path) : 0;
}

int hostfile_commit(struct sbx_hostfile *hf, bool replace, struct sbx_err *err)
{
	if (!hf->active || hf->fd < 0)
		return err_set(err, EBADF, "'%s': not open", hf->path ? hf->path : "?");
	if ((replace ? commit_replace(hf, err) : commit_new(hf, err)) < 0)
		return -1;
	hostfile_abort(hf); /* unlinks a temporary name left (after linkat) */
	return 0;
}

void hostfile_abort(struct sbx_hostfile *hf)
{
	if (!hf->active)
		return;
	if (hf->fd >= 0)
		close(steal_fd(hf->fd));
	if (hf->tmpname && hf->slot >= 0)
		unlinkat(hf->dirfd, hf->tmpname, 0);
	reg_del(&hf->slot);
	if (hf->dirfd >= 0)
		close(steal_fd(hf->dirfd));
	free(steal_ptr(hf->name));
	free(steal_ptr(hf->tmpname));
	free(steal_ptr(hf->path));
	hf->active = false;
}

int hostfile_dir_make(struct sbx_hostdir *d, const char *path, struct sbx_err *err)
{
	_cleanup_free_ char *base = NULL;

	*d = (struct sbx_hostdir){ .fd = -1, .slot = -1 };
	d->parent = open_parent(AT_FDCWD, path, &base, NULL, err);
	if (d->parent < 0)
		return -1;
	d->active = true;
	install_handlers();
	for (int tries = 0; tries < 64 && !d->name; tries++) {
		unsigned int rnd = 0;
		sigset_t old;
		if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
			rnd = (unsigned int)getpid() * 2654435761u + (unsigned int)tries;
		char *t = xasprintf(".%.200s.sbxrun-%08x", base, rnd);
		block_signals(&old);
		int r = mkdirat(d->parent, t, 0700);
		int e = errno;
		if (r == 0 && (d->slot = reg_add(d->parent, t, 1)) < 0)
			unlinkat(d->parent, t, AT_REMOVEDIR), r = -1, e = EMFILE;
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (r == 0)
			d->name = t;
		else
			free(t);
		if (r < 0 && e != EEXIST) {
			errno = e;
			err_sys(err, "create a temporary directory beside '%s'", path);
			hostfile_dir_remove(d);
			return -1;
		}
	}
	d->fd = d->name ? openat(d->parent, d->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (d->fd < 0) {
		err_set(err, d->name ? errno : EEXIST, "create a temporary directory beside '%s'", path);
		hostfile_dir_remove(d);
		return -1;
	}
	const char *slash = strrchr(path, '/');
	d->path = slash ? xasprintf("%.*s/%s", (int)(slash - path), path, d->name) : xstrdup(d->name);
	return 0;
}

void hostfile_dir_remove(struct sbx_hostdir *d)
{
	if (!d->active)
		return;
	if (d->fd >= 0)
		close(steal_fd(d->fd));
	if (d->name)
		remove_flat(d->parent, d->name);
	reg_del(&d->slot);
	close(steal_fd(d->parent));
	free(steal_ptr(d->name));
	free(steal_ptr(d->path));
	d->active = false;
}
