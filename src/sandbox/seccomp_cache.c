/* seccomp_cache.c - the compiled seccomp filter, cached per user so that a
 * start does not rebuild it with libseccomp (building and optimising the
 * rules cost more than every mount of the sandbox together).
 *
 * One file per set of inputs under $XDG_CACHE_HOME/sbxrun/seccomp (0700,
 * owned by the caller): the key line names everything the program depends
 * on (this build of sbxrun, which holds the rule table; libseccomp's
 * version; the kernel and architecture, whose API level libseccomp probes;
 * ptrace and single-uid), and a file is used only if its key line is equal,
 * its size fits, its checksum over the instructions matches, and it and its
 * directory are owned by the caller and writable by no one else. Anything
 * else, and it is rebuilt and rewritten (to a temporary name, renamed);
 * files of other keys that were not written for a month are removed then.
 * No sandbox sees the cache: it lives in the caller's home, which is never
 * mounted into a sandbox unless the caller binds it, and then the profiles
 * beside it are as exposed; the trust is the same as theirs. */
#define _GNU_SOURCE
#include "sandbox/seccomp_cache.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

#define MAGIC "sbxrun-seccomp-bpf 1"

/* FNV-1a: a checksum against torn or corrupted files, not a MAC (anyone
 * who can write the file can also write the profiles that choose the filter). */
static uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* The GNU build id of the running executable: changes with any change to
 * the rule table (or anything else in the binary). */
static int build_id_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	char *out = data;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const unsigned char *desc = (const unsigned char *)p + sizeof(*n) + ((n->n_namesz + 3) & ~3U);
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(p + sizeof(*n), "GNU", 4) &&
			    n->n_descsz <= 64) {
				for (unsigned j = 0; j < n->n_descsz; j++)
					sprintf(out + 2 * j, "%02x", desc[j]);
				return 1;
			}
			p = (const char *)desc + ((n->n_descsz + 3) & ~3U);
		}
	}
	return 1; /* the first object is the executable: stop there */
}

static void self_identity(char *out, size_t size)
{
	struct stat st;
	char id[160] = "";

	dl_iterate_phdr(build_id_cb, id);
	if (id[0])
		snprintf(out, size, "build-id %s", id);
	else if (stat("/proc/self/exe", &st) == 0) /* no build id: the file itself */
		snprintf(out, size, "exe %llu:%llu:%lld:%lld", (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtime);
	else
		snprintf(out, size, "unknown");
}

static void cache_key(const struct sbx_config *cfg, int single_uid, char *key, size_t size)
{
	const struct scmp_version *v = seccomp_version();
	struct utsname u;
	char self[200];

	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	self_identity(self, sizeof(self));
	snprintf(key, size, "%s; %s; libseccomp %u.%u.%u; kernel %s %s; ptrace %d; single-uid %d", MAGIC, self,
		 v ? v->major : 0, v ? v->minor : 0, v ? v->micro : 0, u.release, u.machine, cfg->ptrace ? 1 : 0,
		 single_uid ? 1 : 0);
}

struct header {
	char key[512];
	uint32_t len;
	uint64_t sum;
};

/* A private directory of the caller's: the cache's and, as checked, its own. */
static int open_dir(int create)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	_cleanup_free_ char *base = x && x[0] == '/' ? xasprintf("%s/sbxrun", x)
			       : h && h[0] == '/' ? xasprintf("%s/.cache/sbxrun", h) : NULL;
	struct sbx_err ignored;
	struct stat st;

	if (!base)
		return -1;
	_cleanup_free_ char *dir = xasprintf("%s/seccomp", base);
	if (create && mkdir_p(dir, 0700, &ignored) < 0)
		return -1;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 0077)) {
		log_verbose("seccomp cache: '%s' is not private to uid %u: not used", dir, (unsigned)geteuid());
		close(fd);
		return -1;
	}
	return fd;
}

static int read_cached(int dfd, const char *name, const char *key, struct sbx_bpf *out)
{
	struct header h;
	struct stat st;
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 0022) || st.st_size < (off_t)sizeof(h))
		return -1;
	if (read(fd, &h, sizeof(h)) != sizeof(h) || strncmp(h.key, key, sizeof(h.key)) ||
	    h.len == 0 || h.len > BPF_MAXINSNS ||
	    st.st_size != (off_t)(sizeof(h) + h.len * sizeof(struct sock_filter)))
		return -1;
	out->insns = xmalloc(h.len * sizeof(struct sock_filter));
	out->len = (unsigned short)h.len;
	if (read(fd, out->insns, h.len * sizeof(struct sock_filter)) != (ssize_t)(h.len * sizeof(struct sock_filter)) ||
	    fnv1a(out->insns, h.len * sizeof(struct sock_filter), 0xcbf29ce484222325ULL) != h.sum) {
		log_verbose("seccomp cache: '%s' does not match its checksum: rebuilt", name);
		seccomp_bpf_free(out);
		return -1;
	}
	return 0;
}

/* Each build of sbxrun and each kernel has keys of its own, so old files
 * would pile up: a file not rewritten for CACHE_DAYS goes when another is
 * written (one still in use costs one rebuild then). Only names of the
 * cache's own form are touched. */
#define CACHE_DAYS 30

static int sweep_one(int dfd, const char *name, void *arg)
{
	const time_t *cutoff = arg;
	struct stat st;

	if (strlen(name) != 16 || strspn(name, "0123456789abcdef") != 16)
		return 0;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_mtime < *cutoff)
		unlinkat(dfd, name, 0);
	return 0;
}

static void write_cached(int dfd, const char *name, const char *key, const struct sbx_bpf *bpf)
{
	struct header h = { .len = bpf->len };
	char tmp[64];
	size_t n = bpf->len * sizeof(struct sock_filter);

	snprintf(h.key, sizeof(h.key), "%s", key);
	h.sum = fnv1a(bpf->insns, n, 0xcbf29ce484222325ULL);
	snprintf(tmp, sizeof(tmp), ".tmp-%d", (int)getpid());
	_cleanup_close_ int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, &h, sizeof(h)) != sizeof(h) || write(fd, bpf->insns, n) != (ssize_t)n ||
	    renameat(dfd, tmp, dfd, name) < 0) {
		log_verbose("seccomp cache: cannot write '%s': %s", name, strerror(errno));
		unlinkat(dfd, tmp, 0);
	}
	time_t cutoff = time(NULL) - CACHE_DAYS * 86400;
	struct sbx_err ignored;
	dir_each(dfd, sweep_one, &cutoff, &ignored);
}

int seccomp_prepare(const struct sbx_config *cfg, int single_uid, struct sbx_bpf *out, struct sbx_err *err)
{
	char key[512], name[32];

	memset(out, 0, sizeof(*out));
	if (cfg->seccomp == SBX_OFF)
		return 0;
	cache_key(cfg, single_uid, key, sizeof(key));
	snprintf(name, sizeof(name), "%016llx", (unsigned long long)fnv1a(key, strlen(key), 0xcbf29ce484222325ULL));
	_cleanup_close_ int dfd = open_dir(0);
	if (dfd >= 0 && read_cached(dfd, name, key, out) == 0)
		return 0;
	if (seccomp_compile(cfg, single_uid, out, err) < 0)
		return -1;
	if (dfd < 0)
		dfd = open_dir(1);
	if (dfd >= 0)
		write_cached(dfd, name, key, out);
	return 0;
}
