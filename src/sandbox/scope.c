/* scope.c - a delegated cgroup v2 subtree from systemd. Under systemd an
 * unprivileged login shell sits in session-N.scope, which its user cannot
 * write; the supported way to get a subtree of one's own is to ask the
 * user's manager (root: the system manager) for a transient scope with
 * Delegate=yes over D-Bus, as podman and crun do. sbxrun then moves itself
 * into the scope's "supervisor" leaf (a cgroup with processes may not enable
 * controllers for children) and enables memory, pids and cpu for the
 * sandboxes' cgroups beside it. When the last process leaves, systemd
 * removes the scope. libsystemd is loaded only here, on first use, so that a
 * machine without it (or without a bus) simply falls back. */
#define _GNU_SOURCE
#include "sandbox/scope.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "sandbox/cgroup.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

struct sdbus {
	int (*open_user)(sd_bus **);
	int (*open_system)(sd_bus **);
	int (*bus_new)(sd_bus **);
	int (*set_address)(sd_bus *, const char *);
	int (*set_bus_client)(sd_bus *, int);
	int (*start)(sd_bus *);
	int (*new_call)(sd_bus *, sd_bus_message **, const char *, const char *, const char *,
			const char *);
	int (*append)(sd_bus_message *, const char *, ...);
	int (*open_container)(sd_bus_message *, char, const char *);
	int (*close_container)(sd_bus_message *);
	int (*call)(sd_bus *, sd_bus_message *, uint64_t, sd_bus_error *, sd_bus_message **);
	sd_bus_message *(*msg_unref)(sd_bus_message *);
	sd_bus *(*bus_unref)(sd_bus *);
	void (*error_free)(sd_bus_error *);
};

static int load(struct sdbus *b, struct sbx_err *err)
{
	void *h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return err_set(err, 0, "libsystemd is not available (%s)", dlerror());
#define SYM(field, name)                                                       \
	if (!(*(void **)&b->field = dlsym(h, name)))                           \
		return err_set(err, 0, "libsystemd has no '%s'", name)
	SYM(open_user, "sd_bus_open_user");
	SYM(open_system, "sd_bus_open_system");
	SYM(bus_new, "sd_bus_new");
	SYM(set_address, "sd_bus_set_address");
	SYM(set_bus_client, "sd_bus_set_bus_client");
	SYM(start, "sd_bus_start");
	SYM(new_call, "sd_bus_message_new_method_call");
	SYM(append, "sd_bus_message_append");
	SYM(open_container, "sd_bus_message_open_container");
	SYM(close_container, "sd_bus_message_close_container");
	SYM(call, "sd_bus_call");
	SYM(msg_unref, "sd_bus_message_unref");
	SYM(bus_unref, "sd_bus_flush_close_unref");
	SYM(error_free, "sd_bus_error_free");
#undef SYM
	return 0;
}

int scope_is_ours(const char *dir)
{
	const char *base = strrchr(dir, '/');
	size_t n = base ? strlen(base) : 0;

	return base && !strncmp(base, "/sbxrun-", 8) && n > 6 && !strcmp(base + n - 6, ".scope");
}

int scope_systemd_running(void)
{
	struct stat st;
	struct statfs fs;

	return lstat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode) &&
	       statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

/* StartTransientUnit(name, "fail", properties, no aux units) */
static int start_unit(const struct sdbus *b, sd_bus *bus, const char *name, struct sbx_err *err)
{
	sd_bus_message *m = NULL, *reply = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = b->new_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
			    "org.freedesktop.systemd1.Manager", "StartTransientUnit");

	if (r >= 0)
		r = b->append(m, "ss", name, "fail");
	if (r >= 0)
		r = b->open_container(m, 'a', "(sv)");
	if (r >= 0)
		r = b->append(m, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)", "Description", "s",
			      "sbxrun sandboxes (delegated cgroup)", "PIDs", "au", 1, (uint32_t)getpid(),
			      "Delegate", "b", 1, "MemoryAccounting", "b", 1, "TasksAccounting", "b", 1,
			      "CPUAccounting", "b", 1, "CollectMode", "s", "inactive-or-failed");
	if (r >= 0)
		r = b->close_container(m);
	if (r >= 0)
		r = b->append(m, "a(sa(sv))", 0);
	if (r >= 0)
		r = b->call(bus, m, 10 * 1000 * 1000, &e, &reply);
	if (r < 0)
		err_set(err, -r, "systemd: start transient unit '%s'%s%s", name, e.message ? ": " : "",
			e.message ? e.message : "");
	b->error_free(&e);
	if (reply)
		b->msg_unref(reply);
	if (m)
		b->msg_unref(m);
	return r < 0 ? -1 : 0;
}

/* systemd moves us when the job runs: wait (up to 5 s) until our cgroup is
 * the scope's. */
static int wait_moved(const char *name, char *dir, size_t size, struct sbx_err *err)
{
	struct timespec ms = { 0, 1000 * 1000 };

	for (int i = 0; i < 5000; i++) {
		if (cgroup_self_dir(NULL, dir, size) == 0) {
			const char *base = strrchr(dir, '/');
			if (base && !strcmp(base + 1, name))
				return 0;
		}
		nanosleep(&ms, NULL);
	}
	return err_set(err, ETIMEDOUT, "systemd did not move sbxrun into '%s'", name);
}

/* The scope becomes the parent: we move into its supervisor/ leaf, then
 * enable what the scope offers for its children. */
static int take_scope(const char *dir, struct sbx_err *err)
{
	char path[PATH_MAX + 64], ctls[512];
	static const char *const want[] = { "memory", "pids", "cpu" };

	snprintf(path, sizeof(path), "%s/supervisor", dir);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return err_sys(err, "create cgroup '%s'", path);
	snprintf(path, sizeof(path), "%s/supervisor/cgroup.procs", dir);
	if (cgroup_write_path(path, "0", err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
	if (cgroup_read_path(path, ctls, sizeof(ctls)) < 0)
		return err_sys(err, "read '%s'", path);
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		char op[16];
		if (!cgroup_list_has(ctls, want[i]))
			continue;
		snprintf(op, sizeof(op), "+%s", want[i]);
		if (cgroup_write_path(path, op, err) < 0)
			return -1;
	}
	return 0;
}

/* The user's bus, also where the environment does not name it (sudo -u,
 * runuser, cron): /run/user/UID/bus when it is there. */
static int open_user_bus(const struct sdbus *b, sd_bus **bus)
{
	char addr[64];
	int r;

	if (getenv("DBUS_SESSION_BUS_ADDRESS") || getenv("XDG_RUNTIME_DIR"))
		return b->open_user(bus);
	snprintf(addr, sizeof(addr), "unix:path=/run/user/%u/bus", (unsigned)getuid());
	if ((r = b->bus_new(bus)) < 0)
		return r;
	if ((r = b->set_address(*bus, addr)) < 0 || (r = b->set_bus_client(*bus, 1)) < 0 ||
	    (r = b->start(*bus)) < 0) {
		b->bus_unref(*bus);
		*bus = NULL;
	}
	return r;
}

int scope_delegate(char *dir, size_t size, struct sbx_err *err)
{
	static struct sdbus b;
	static int loaded;
	sd_bus *bus = NULL;
	char name[96];
	struct timespec ts;

	if (!loaded && load(&b, err) < 0)
		return -1;
	loaded = 1;
	int r = geteuid() == 0 ? b.open_system(&bus) : open_user_bus(&b, &bus);
	if (r < 0)
		return err_set(err, -r, "cannot reach the %s systemd manager's bus",
			       geteuid() == 0 ? "system" : "user's");
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(name, sizeof(name), "sbxrun-%d-%lx.scope", (int)getpid(),
		 (unsigned long)(ts.tv_nsec ^ ts.tv_sec) & 0xffffff);
	r = start_unit(&b, bus, name, err);
	b.bus_unref(bus);
	if (r < 0 || wait_moved(name, dir, size, err) < 0)
		return -1;
	return take_scope(dir, err);
}
