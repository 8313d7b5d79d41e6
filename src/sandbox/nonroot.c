/* nonroot.c - [sandbox] user: who the user is (the image's, or made at
 * start in the sandbox's layer), and how a command becomes it. sbxrun maps
 * one host id, the caller's, into the sandbox as its root; a second uid
 * would take a subuid range and newuidmap. Instead each of the user's
 * commands gets a user namespace of its own below the sandbox's, mapping
 * the user's uid to the sandbox's root: the files stay the caller's, the
 * command has no capability anywhere, and its mount namespace keeps it off
 * everything but its own places (docs/security.md says what that does and
 * does not give). */
#define _GNU_SOURCE
#include "sandbox/nonroot.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "sandbox/env.h"
#include "sandbox/mountflags.h"
#include "sandbox/plan.h"

#define FIRST_UID 1000

/* Field i of a colon-separated line (passwd, group) into buf; -1 if absent. */
static int field(const char *line, int i, char *buf, size_t size)
{
	for (; i > 0 && line; i--)
		if ((line = strchr(line, ':')))
			line++;
	if (!line)
		return -1;
	size_t n = strcspn(line, ":\n");
	if (n >= size)
		return -1;
	memcpy(buf, line, n);
	buf[n] = '\0';
	return 0;
}

static int field_id(const char *line, int i, unsigned long *id)
{
	char buf[16], *end;

	if (field(line, i, buf, sizeof(buf)) < 0 || !buf[0])
		return -1;
	*id = strtoul(buf, &end, 10);
	return *end ? -1 : 0;
}

static int is_number(const char *s)
{
	return s[0] && strspn(s, "0123456789") == strlen(s);
}

/* What Debian's adduser takes by default, and what passwd can hold. */
static int good_name(const char *s)
{
	return strlen(s) <= 32 && (s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z')) &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == strlen(s);
}

/* The line of passwd naming who (a name or a uid), or NULL. */
static const char *find_line(const char *text, const char *who)
{
	char name[64];
	unsigned long uid;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (field(l, 0, name, sizeof(name)) < 0 || field_id(l, 2, &uid) < 0)
			continue;
		if (!strcmp(name, who) || (is_number(who) && strtoul(who, NULL, 10) == uid))
			return l;
	}
	return NULL;
}

/* The lowest id from FIRST_UID that no line of text has in field i. */
static unsigned long free_id(const char *text, int i, unsigned long want)
{
	for (unsigned long id = want;; id++) {
		int taken = 0;
		for (const char *l = text; l && *l && !taken; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			unsigned long v;
			taken = field_id(l, i, &v) == 0 && v == id;
		}
		if (!taken)
			return id;
	}
}

static void user_env(const struct sbx_config *cfg, struct sbx_nonroot *u)
{
	struct sbx_envv e = { 0 };
	const char *path = "/usr/local/bin:/usr/bin:/bin";

	for (char **p = u->root_envp; p && *p; p++) {
		envv_set(&e, *p);
		if (!strncmp(*p, "PATH=", 5))
			path = *p + 5;
	}
	envv_setf(&e, "HOME", u->home);
	envv_setf(&e, "USER", u->name);
	envv_setf(&e, "LOGNAME", u->name);
	/* pip's and npm's scripts (~/.local/bin), go install's (GOPATH's default, ~/go) */
	_cleanup_free_ char *p = xasprintf("%s/.local/bin:%s/go/bin:%s", u->home, u->home, path);
	envv_setf(&e, "PATH", p);
	for (size_t i = 0; i < cfg->env.n; i++) /* -e still has the last word */
		envv_set(&e, cfg->env.v[i]);
	u->envp = e.v;
}

static int lookup(const struct sbx_config *cfg, int rootfs_fd, struct sbx_nonroot *u,
		  struct sbx_err *err)
{
	_cleanup_free_ char *passwd = NULL, *group = NULL;
	struct sbx_err rerr;
	const char *who = cfg->user;
	char buf[256];
	unsigned long uid, gid;

	if (read_file_beneath(rootfs_fd, "etc/passwd", 1 << 20, &passwd, NULL, &rerr) < 0)
		passwd = xstrdup("");
	const char *l = find_line(passwd, who);
	if (l && field(l, 0, buf, sizeof(buf)) == 0 && field_id(l, 2, &uid) == 0 &&
	    field_id(l, 3, &gid) == 0) {
		u->name = xstrdup(buf);
		u->uid = (uid_t)uid;
		u->gid = (gid_t)gid;
		u->home = xstrdup(field(l, 5, buf, sizeof(buf)) == 0 && buf[0] == '/' ? buf : "/");
		return 0;
	}
	if (is_number(who))
		return err_set(err, 0, "user = %s: uid %s is not in the image's /etc/passwd; give a "
			       "name, and sbxrun makes that user", who, who);
	if (!good_name(who))
		return err_set(err, 0, "user = '%s': not a user name (a-z, 0-9, '_', '-', starting "
			       "with a letter or '_', at most 32)", who);
	if (read_file_beneath(rootfs_fd, "etc/group", 1 << 20, &group, NULL, &rerr) < 0)
		group = xstrdup("");
	u->name = xstrdup(who);
	u->uid = (uid_t)free_id(passwd, 2, FIRST_UID);
	u->gid = (gid_t)free_id(group, 2, u->uid);
	u->home = xasprintf("/home/%s", who);
	u->create = 1;
	return 0;
}

int nonroot_plan(const struct sbx_config *cfg, struct sbx_plan *plan, struct sbx_err *err)
{
	struct sbx_nonroot *u = &plan->user;

	if (!cfg->user || !strcmp(cfg->user, "root") || !strcmp(cfg->user, "0"))
		return 0;
	if (lookup(cfg, plan->img.rootfs_fd, u, err) < 0)
		return -1;
	if (u->uid == 0) { /* the image's name for root */
		nonroot_free(u);
		return 0;
	}
	u->root_envp = steal_ptr(plan->envp);
	user_env(cfg, u);
	plan->as_user = 1;
	plan->envp = util_strvdup(u->envp);
	if (!cfg->workdir && !cfg->workspace) {
		free(plan->workdir);
		plan->workdir = xstrdup(u->home);
	}
	log_verbose("user: commands run as '%s' (uid %u, gid %u, HOME %s%s), in a user namespace "
		    "of their own below the sandbox's root, everything but their own places "
		    "read-only; --user root runs one as root", u->name, (unsigned)u->uid,
		    (unsigned)u->gid, u->home, u->create ? ", made at start: the image has no such user" : "");
	return 0;
}

int nonroot_pick(const struct sbx_plan *plan, const char *who, int *as_user, struct sbx_err *err)
{
	const struct sbx_nonroot *u = &plan->user;
	char id[16];

	*as_user = u->name != NULL;
	if (!who)
		return 0;
	*as_user = 0;
	if (!strcmp(who, "root") || !strcmp(who, "0"))
		return 0;
	snprintf(id, sizeof(id), "%u", u->name ? (unsigned)u->uid : 0);
	if (u->name && (!strcmp(who, u->name) || !strcmp(who, id))) {
		*as_user = 1;
		return 0;
	}
	if (!u->name)
		return err_set(err, 0, "--user %s: this session has no [sandbox] user; its commands "
			       "run as root", who);
	return err_set(err, 0, "--user %s: this session's commands run as '%s', or as root "
		       "(--user root)", who, u->name);
}

char **nonroot_env(const struct sbx_plan *plan, int as_user)
{
	if (!plan->user.name)
		return plan->envp;
	return as_user ? plan->user.envp : plan->user.root_envp;
}

void nonroot_free(struct sbx_nonroot *u)
{
	free(u->name);
	free(u->home);
	util_strvfreep(&u->envp);
	util_strvfreep(&u->root_envp);
	memset(u, 0, sizeof(*u));
}

/* A whole small file from fd (a /proc file's size says nothing). */
static int read_fd(int fd, size_t max, char **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap + 1);

	for (;;) {
		if (n == cap) {
			if (cap >= max) {
				free(buf);
				errno = EFBIG;
				return -1;
			}
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* Appends line to an account file unless a line already names the user
 * (a snapshot's layer, a second start): never rewritten, so the image's
 * lines stay as they are. A file the image lacks is skipped (shadow and
 * gshadow) unless must. */
static int add_line(const char *path, const char *name, const char *line, int must,
		    struct sbx_err *err)
{
	_cleanup_close_ int fd = open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC | (must ? O_CREAT : 0), 0644);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;

	if (fd < 0 && errno == ENOENT && !must)
		return 0;
	if (fd < 0 || read_fd(fd, 1 << 22, &text, &len) < 0)
		return err_sys(err, "user '%s': open '%s'", name, path);
	size_t n = strlen(name);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, name, n) && l[n] == ':')
			return 0;
	_cleanup_free_ char *add = xasprintf("%s%s\n", len && text[len - 1] != '\n' ? "\n" : "", line);
	if (write_all(fd, add, strlen(add)) < 0)
		return err_sys(err, "user '%s': write '%s'", name, path);
	return 0;
}

static int accounts(const struct sbx_nonroot *u, struct sbx_err *err)
{
	const char *shell = access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh";
	_cleanup_free_ char *pw = xasprintf("%s:x:%u:%u::%s:%s", u->name, (unsigned)u->uid,
					    (unsigned)u->gid, u->home, shell);
	_cleanup_free_ char *gr = xasprintf("%s:x:%u:", u->name, (unsigned)u->gid);
	/* no password: su and login refuse it ('!'); the days since 1970 as useradd writes them */
	_cleanup_free_ char *sh = xasprintf("%s:!:%ld:0:99999:7:::", u->name, (long)(time(NULL) / 86400));
	_cleanup_free_ char *gs = xasprintf("%s:!::", u->name);

	if (add_line("/etc/passwd", u->name, pw, 1, err) < 0 || add_line("/etc/group", u->name, gr, 1, err) < 0 ||
	    add_line("/etc/shadow", u->name, sh, 0, err) < 0 || add_line("/etc/gshadow", u->name, gs, 0, err) < 0)
		return -1;
	return 0;
}

/* mkdir -p inside (after pivot_root: the sandbox's own tree), mode for new parts. */
static int mkdirs(const char *path, mode_t mode, struct sbx_err *err)
{
	_cleanup_free_ char *p = xstrdup(path);

	for (char *s = p + 1;; s++) {
		if (*s && *s != '/')
			continue;
		char c = *s;
		*s = '\0';
		struct stat st;
		if (mkdir(p, mode) < 0 && (errno != EEXIST || stat(p, &st) < 0 || !S_ISDIR(st.st_mode)))
			return err_sys(err, "mkdir '%s'", p);
		if (!(*s = c))
			return 0;
	}
}

/* A settings file in HOME, written only when there is none. */
static int home_file(const struct sbx_nonroot *u, const char *dir, const char *name, const char *text,
		     struct sbx_err *err)
{
	_cleanup_free_ char *d = xasprintf("%s%s%s", u->home, dir[0] ? "/" : "", dir);
	_cleanup_free_ char *f = xasprintf("%s/%s", d, name);

	if (mkdirs(d, 0755, err) < 0)
		return -1;
	_cleanup_close_ int fd = open(f, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST)
		return 0;
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
		return err_sys(err, "user '%s': write '%s'", u->name, f);
	return 0;
}

/* pip: Debian marks its Python externally managed (PEP 668), and pip
 * then refuses even --user; the user's site is all this user can write
 * (the system's is read-only to it), so the guard is lifted here, in a
 * file the user sees and may change. A plain `pip install` goes to the
 * user's site by itself (the system's is not writable). npm: -g into
 * ~/.local. go install: GOPATH's default, ~/go. Both bin directories are
 * on the user's PATH (user_env). */
static const char pip_conf[] =
	"# written by sbxrun for the sandbox's user (docs/security.md)\n"
	"# Debian's pip refuses --user installs (PEP 668): the user's site, ~/.local,\n"
	"# is the only one this user can write, so the guard is lifted for it.\n"
	"[global]\nbreak-system-packages = true\n";

int nonroot_setup(const struct sbx_plan *plan, struct sbx_err *err)
{
	const struct sbx_nonroot *u = &plan->user;

	if (!u->name)
		return 0;
	if (u->create && accounts(u, err) < 0)
		return -1;
	if (mkdirs(u->home, 0755, err) < 0)
		return -1;
	_cleanup_free_ char *npmrc = xasprintf("# written by sbxrun for the sandbox's user: npm -g "
					       "installs here, its bin on PATH\nprefix=%s/.local\n", u->home);
	if (home_file(u, ".config/pip", "pip.conf", pip_conf, err) < 0 ||
	    home_file(u, "", ".npmrc", npmrc, err) < 0)
		return -1;
	_cleanup_free_ char *bin = xasprintf("%s/.local/bin", u->home);
	return mkdirs(bin, 0755, err);
}

/* Below one of the user's own places: HOME, the temporary directories,
 * /dev and /proc (the kernel's own checks), /sys (masked), the workspace
 * and the binds made writable. */
static int users_place(const struct sbx_plan *plan, const char *mp)
{
	const char *fixed[] = { plan->user.home, "/tmp", "/var/tmp", "/dev", "/proc", "/sys", plan->workspace };

	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++) {
		size_t n = fixed[i] ? strlen(fixed[i]) : 0;
		if (n && !strncmp(mp, fixed[i], n) && (mp[n] == '\0' || mp[n] == '/'))
			return 1;
	}
	for (size_t i = 0; i < plan->nbinds; i++) {
		size_t n = strlen(plan->binds[i].dst);
		if (plan->binds[i].rw && !strncmp(mp, plan->binds[i].dst, n) && (mp[n] == '\0' || mp[n] == '/'))
			return 1;
	}
	return 0;
}

/* mountinfo's escapes (\040 for a space, ...) undone in place. */
static void unescape(char *s)
{
	char *o = s;
	for (; *s; s++, o++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o = *s;
		}
	}
	*o = '\0';
}

static int readonly(const char *mp, struct sbx_err *err)
{
	struct statvfs sv;

	if (statvfs(mp, &sv) < 0)
		return err_sys(err, "user: statvfs '%s'", mp);
	if (sv.f_flag & ST_RDONLY)
		return 0;
	if (mount(NULL, mp, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | mountflags_locked(&sv), NULL) < 0)
		return err_sys(err, "user: remount '%s' read-only", mp);
	return 0;
}

/* The user's places that may be parts of the root's file system (HOME,
 * the temporary directories, a snapshot's workspace) become mounts of
 * their own, writable; then every mount outside the user's places is made
 * read-only: the root, the files bound into /etc, read-only binds. */
static int readonly_view(const struct sbx_plan *plan, struct sbx_err *err)
{
	const char *own[] = { plan->user.home, "/tmp", "/var/tmp", plan->workspace };

	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		if (own[i] && mount(own[i], own[i], NULL, MS_BIND | MS_REC, NULL) < 0 &&
		    (errno != ENOENT || i == 0))
			return err_sys(err, "user: bind '%s'", own[i]);
	_cleanup_free_ char *info = NULL;
	_cleanup_close_ int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	size_t len;
	if (fd < 0 || read_fd(fd, 1 << 22, &info, &len) < 0)
		return err_sys(err, "user: read /proc/self/mountinfo");
	for (char *save = NULL, *l = strtok_r(info, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *mp = l;
		for (int f = 0; f < 4 && mp; f++) /* the fifth field */
			if ((mp = strchr(mp, ' ')))
				mp++;
		if (!mp)
			continue;
		mp[strcspn(mp, " ")] = '\0';
		unescape(mp);
		if (!users_place(plan, mp) && readonly(mp, err) < 0)
			return -1;
	}
	return 0;
}

static int write_self(const char *file, const char *text, struct sbx_err *err)
{
	_cleanup_close_ int fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
		return err_sys(err, "user: write '%s'", file);
	return 0;
}

/* The user's uid and gid mapped to the sandbox's root, one id each. The
 * process is non-dumpable, which gives its /proc files to the host's root:
 * dumpable while it writes its own maps (nothing else runs in its pid
 * namespace yet), then not again. */
static int own_userns(const struct sbx_nonroot *u, struct sbx_err *err)
{
	char map[64];
	int r = 0;

	if (unshare(CLONE_NEWUSER) < 0)
		return err_sys(err, "user '%s': a user namespace of its own", u->name);
	prctl(PR_SET_DUMPABLE, 1);
	snprintf(map, sizeof(map), "%u 0 1\n", (unsigned)u->uid);
	r = write_self("/proc/self/setgroups", "deny", err);
	if (r == 0)
		r = write_self("/proc/self/uid_map", map, err);
	snprintf(map, sizeof(map), "%u 0 1\n", (unsigned)u->gid);
	if (r == 0)
		r = write_self("/proc/self/gid_map", map, err);
	prctl(PR_SET_DUMPABLE, 0);
	if (r == 0 && (getuid() != u->uid || getgid() != u->gid))
		return err_set(err, EPERM, "user '%s': uid %u after its maps", u->name, (unsigned)getuid());
	return r;
}

int nonroot_enter(const struct sbx_plan *plan, int own_mntns, struct sbx_err *err)
{
	if (!plan->as_user)
		return 0;
	if (own_mntns && unshare(CLONE_NEWNS) < 0)
		return err_sys(err, "user: a mount namespace of its own");
	if (readonly_view(plan, err) < 0)
		return -1;
	return own_userns(&plan->user, err);
}
