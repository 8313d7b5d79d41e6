/* download.c - `sbxrun download [--session NAME] URL DEST`: a host-side
 * fetch with libcurl, for what user code inside may not fetch itself.
 * http and https only, each redirect checked again against [download]
 * allow and the address guard, a size cap counted as bytes arrive, a
 * deadline and a speed floor, no netrc, no content decoding; DEST confined
 * to the workspace (or below the current directory). Into a session the
 * file is staged in the user's cache directory, then written into the
 * workspace under a temporary name and renamed; on the host it is an
 * unnamed file linked into place (base/hostfile.c). */
#define _GNU_SOURCE
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/hostfile.h"
#include "base/log.h"
#include "base/paths.h"
#include "base/relpath.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/download.h"
#include "net/dlurl.h"
#include "net/hostmatch.h"
#include "session/session_client.h"

#define MAX_REDIRECTS 10
#define STAGE_NAME "download-%d" /* with the pid */

static const char usage[] =
	"usage: sbxrun download [--session NAME] [--profile P] [--sha256 HEX] URL DEST\n"
	"       sbxrun download [--profile P] [--sha256 HEX] URL SESSION:DEST\n"
	"Fetches URL on the host side into DEST: relative to the session's workspace\n"
	"with --session or SESSION:, else below the current directory (a host path\n"
	"with ':' is written ./NAME).\n";

struct dl {
	const struct sbx_config *cfg;
	struct hostmatch_list allow; /* [download] allow, compiled */
	int fd;                 /* the temporary file */
	uint64_t got, max;
	int too_big;
	struct hostmatch_grant grant; /* of the current hop's host */
	const char *refused;    /* address guard's reason */
	EVP_MD_CTX *md;
	int progress;
	uint64_t deadline;      /* monotonic ms; 0: none */
	uint64_t seen;          /* bytes received over all hops */
	uint64_t win_start, win_seen; /* the current min_speed window */
	enum { DL_GOING, DL_PAST_DEADLINE, DL_TOO_SLOW } stop;
	char resolve[300];      /* host.sbxrun.internal:PORT:127.0.0.1 */
	struct curl_slist resolve_list;
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct dl *d = arg;
	size_t len = size * n;

	if (d->max && d->got + len > d->max) {
		d->too_big = 1;
		return 0;
	}
	if (write_all(d->fd, p, len) < 0)
		return 0;
	EVP_DigestUpdate(d->md, p, len);
	d->got += len;
	d->seen += len;
	return len;
}

/* The deadline, and the speed over windows of min_speed_time: a window
 * with less than min_speed a second ends the download. libcurl calls this
 * while data flows and about once a second while none does. */
static int past_limits(struct dl *d)
{
	uint64_t now = now_ms(), span = now - d->win_start;

	if (d->deadline && now >= d->deadline)
		return d->stop = DL_PAST_DEADLINE;
	if (!d->cfg->dl_min_speed_ms || span < d->cfg->dl_min_speed_ms)
		return 0;
	if ((d->seen - d->win_seen) * 1000 / span < d->cfg->dl_min_speed)
		return d->stop = DL_TOO_SLOW;
	d->win_start = now;
	d->win_seen = d->seen;
	return 0;
}

static curl_socket_t on_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct dl *d = arg;
	const char *why = hostmatch_addr_refusal(&a->addr, &d->grant);

	(void)purpose;
	if (why) {
		d->refused = why;
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

static int on_progress(void *arg, curl_off_t total, curl_off_t now, curl_off_t ut, curl_off_t un)
{
	struct dl *d = arg;
	(void)ut;
	(void)un;
	if (past_limits(d))
		return 1; /* CURLE_ABORTED_BY_CALLBACK */
	if (d->progress && total > 0)
		fprintf(stderr, "\r[%-40.*s] %3d%%", (int)(40 * now / total),
			"########################################", (int)(100 * now / total));
	else if (d->progress)
		fprintf(stderr, "\r%" CURL_FORMAT_CURL_OFF_T " bytes", now);
	return 0;
}

/* Scheme, host and port of one hop, checked against the profile. */
static int check_url(struct dl *d, CURL *c, const char *url, struct sbx_err *err)
{
	struct dlurl u;

	if (dlurl_check(&d->allow, url, d->cfg->profile, &u, err) < 0)
		return -1;
	d->grant = u.grant;
	snprintf(d->resolve, sizeof(d->resolve), "%s:%d:127.0.0.1", HOSTMATCH_INTERNAL, u.port);
	d->resolve_list = (struct curl_slist){ d->resolve, NULL };
	curl_easy_setopt(c, CURLOPT_RESOLVE, d->grant.internal ? &d->resolve_list : NULL);
	curl_easy_setopt(c, CURLOPT_URL, url);
	return 0;
}

static void setup(CURL *c, struct dl *d)
{
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L); /* each hop is checked here */
	curl_easy_setopt(c, CURLOPT_NETRC, (long)CURL_NETRC_IGNORED);
	curl_easy_setopt(c, CURLOPT_PROXY, ""); /* the address guard must see the real peer */
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "sbxrun-download");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, d);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, on_socket);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, d);
	if (d->max)
		curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)d->max);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L); /* past_limits runs there */
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, d);
}

/* Why a limit ended the download, and which keys set it. */
static int stopped(struct dl *d, struct sbx_err *err)
{
	char t[32], speed[32];

	if (d->stop == DL_TOO_SLOW) {
		format_size(d->cfg->dl_min_speed, speed, sizeof(speed));
		format_duration(d->cfg->dl_min_speed_ms, t, sizeof(t));
		return err_set(err, 0, "stopped: slower than %s bytes a second for %s "
			       "([download] min_speed, min_speed_time)", speed, t);
	}
	format_duration(d->cfg->dl_timeout_ms, t, sizeof(t));
	return err_set(err, 0, "stopped at its %s deadline ([download] timeout)", t);
}

/* One hop; returns 1 and the next URL on a redirect, 0 when done. */
static int hop(CURL *c, struct dl *d, char **next, struct sbx_err *err)
{
	long code = 0;
	char *loc = NULL;

	if (ftruncate(d->fd, 0) < 0 || lseek(d->fd, 0, SEEK_SET) < 0)
		return err_sys(err, "truncate");
	d->got = 0;
	EVP_DigestInit_ex(d->md, EVP_sha256(), NULL);
	if (d->deadline) /* libcurl's own timer too, for where no callback comes */
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(d->deadline > now_ms() ? d->deadline - now_ms() : 1));
	CURLcode rc = curl_easy_perform(c);
	if (d->progress)
		fputc('\n', stderr);
	if (d->stop || (rc == CURLE_OPERATION_TIMEDOUT && d->deadline && now_ms() >= d->deadline))
		return stopped(d, err);
	if (d->too_big || rc == CURLE_FILESIZE_EXCEEDED)
		return err_plain(err, EFBIG, "larger than [download] max_size (%" PRIu64 " bytes)", d->max);
	if (d->refused)
		return err_plain(err, EACCES, "refused to connect: the address is %s", d->refused);
	if (rc != CURLE_OK)
		return err_set(err, 0, "%s", curl_easy_strerror(rc));
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 300 && code < 400 && curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK && loc) {
		*next = xstrdup(loc);
		return 1;
	}
	if (code != 200)
		return err_set(err, 0, "the server answered %ld", code);
	return 0;
}

static int fetch(struct dl *d, const char *url, struct sbx_err *err)
{
	CURL *c = curl_easy_init();
	char *cur = xstrdup(url);
	int r = -1;

	if (!c)
		return err_set(err, 0, "curl_easy_init failed");
	setup(c, d);
	d->win_start = now_ms();
	d->deadline = d->cfg->dl_timeout_ms ? d->win_start + d->cfg->dl_timeout_ms : 0;
	for (int i = 0; i <= MAX_REDIRECTS; i++) {
		char *next = NULL;
		if (check_url(d, c, cur, err) < 0)
			break;
		r = hop(c, d, &next, err);
		if (r < 0)
			err_wrap(err, "download '%s'", cur);
		free(cur);
		cur = next;
		if (r != 1)
			break;
		r = err_set(err, 0, "more than %d redirects", MAX_REDIRECTS);
	}
	free(cur);
	curl_easy_cleanup(c);
	return r;
}

/* DEST: relative, without '..', below basefd; no symlink on the way. */
static int dest_dir(int basefd, const char *dest, const char **name, struct sbx_err *err)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
	char dir[4096];

	if (relpath_split(dest, "DEST", dir, sizeof(dir), name, err) < 0)
		return -1;
	int fd = (int)syscall(SYS_openat2, basefd, dir, &how, sizeof(how));
	return fd >= 0 ? fd : err_sys(err, "DEST directory '%s'%s", dir,
				      errno == ELOOP || errno == EXDEV ? " (a symlink or mount is in the way)" : "");
}

static int open_base(const struct sbx_config *cfg, int *in_sandbox, struct sbx_err *err)
{
	*in_sandbox = 0;
	if (!cfg->session)
		return open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *ws = NULL;
	int rootfd;
	if (session_root(cfg->session, &rootfd, &ws, err) < 0)
		return -1;
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int fd = ws[0] ? (int)syscall(SYS_openat2, rootfd, ws, &how, sizeof(how)) : -1;
	close(rootfd);
	if (fd < 0)
		return err_set(err, errno, "session '%s' has no workspace", cfg->session);
	*in_sandbox = 1;
	return fd;
}

static int verify(struct dl *d, const char *want, struct sbx_err *err)
{
	unsigned char md[32];
	unsigned int n = 0;
	char hex[65];

	EVP_DigestFinal_ex(d->md, md, &n);
	for (unsigned i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	if (want && strcasecmp(hex, want) != 0)
		return err_set(err, 0, "SHA-256 mismatch: got %s, expected %s", hex, want);
	return 0;
}

/* Where the bytes go while they arrive: into the session, a file staged in
 * the user's own cache directory (the caller's current directory may not
 * be writable, and the sandbox must not see a half-made file); on the
 * host, an unnamed file beside DEST. Either leaves nothing behind. */
static int open_target(struct sbx_hostfile *hf, int in_sandbox, int dir, const char *name,
		       struct sbx_err *err)
{
	_cleanup_free_ char *stage = NULL;

	if (!in_sandbox)
		return hostfile_open(hf, dir, name, 0644, err) < 0 ? err_wrap(err, "DEST") : 0;
	if (paths_staging_dir(&stage, err) < 0)
		return err_wrap(err, "a place to stage the download");
	_cleanup_free_ char *path = xasprintf("%s/" STAGE_NAME, stage, (int)getpid());
	return hostfile_open(hf, AT_FDCWD, path, 0600, err);
}

/* Copies the staged file into a new temporary name in the workspace and
 * renames it over DEST (a symlink or FIFO planted at DEST is replaced,
 * never opened). */
static int copy_in(int rd, int dir, const char *tmp, const char *name, struct sbx_err *err)
{
	_cleanup_close_ int out = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	ssize_t n;

	if (out < 0)
		return err_sys(err, "create a temporary file for '%s'", name);
	while ((n = sendfile(out, rd, NULL, 1 << 30)) > 0)
		;
	if (n < 0 || renameat(dir, tmp, dir, name) < 0) {
		err_sys(err, n < 0 ? "write '%s'" : "rename to '%s'", name);
		unlinkat(dir, tmp, 0);
		return -1;
	}
	return 0;
}

/* The staged file into the workspace. Local and bounded by max_size:
 * SIGINT, SIGTERM and SIGHUP wait until it is done or undone, so no
 * temporary name is left there. */
static int place(struct sbx_hostfile *hf, int dir, const char *name, const char *dest,
		 struct sbx_err *err)
{
	char proc[64], tmp[64];
	sigset_t hold, old;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", hf->fd);
	_cleanup_close_ int rd = open(proc, O_RDONLY | O_CLOEXEC);
	if (rd < 0)
		return err_sys(err, "read back the staged download");
	snprintf(tmp, sizeof(tmp), DOWNLOAD_TMP_NAME, (int)getpid());
	sigemptyset(&hold);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGTERM);
	sigaddset(&hold, SIGHUP);
	sigprocmask(SIG_BLOCK, &hold, &old);
	paths_as_sandbox_owner(1);
	int r = copy_in(rd, dir, tmp, name, err);
	paths_as_sandbox_owner(0);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r < 0 ? err_wrap(err, "DEST '%s'", dest) : 0;
}

int download_run(const struct sbx_config *cfg, const char *url, const char *dest, struct sbx_err *err)
{
	struct dl d = { .cfg = cfg, .max = cfg->dl_max_size, .progress = isatty(2) && sbx_log_level > 0 };
	struct hostmatch_sets none = { 0 };
	int in_sandbox, r = -1;
	const char *name = NULL;
	_cleanup_close_ int base = open_base(cfg, &in_sandbox, err);
	_cleanup_close_ int dir = base < 0 ? -1 : dest_dir(base, dest, &name, err);
	_cleanup_hostfile_ struct sbx_hostfile hf = { 0 };

	if (dir < 0 || open_target(&hf, in_sandbox, dir, name, err) < 0)
		return -1;
	if (hostmatch_compile(&cfg->dl_allow, &none, &d.allow, err) < 0)
		return -1;
	d.fd = hf.fd;
	d.md = EVP_MD_CTX_new();
	if (fetch(&d, url, err) == 0 && verify(&d, cfg->sha256, err) == 0)
		r = in_sandbox ? place(&hf, dir, name, dest, err) : hostfile_commit(&hf, true, err);
	EVP_MD_CTX_free(d.md);
	hostmatch_free(&d.allow);
	if (r == 0)
		log_info("downloaded %" PRIu64 " bytes to %s%s%s", d.got, cfg->session ? cfg->session : "",
			 cfg->session ? ":" : "", dest);
	return r;
}

/* DEST as SESSION:PATH (cp's form: no '/' before the colon, so ./a:b is a
 * host path) names the session as --session does. */
static int dest_session(struct sbx_config *cfg, const char **dest, struct sbx_err *err)
{
	const char *colon = strchr(*dest, ':'), *slash = strchr(*dest, '/');

	if (!colon || colon == *dest || (slash && slash < colon))
		return 0;
	_cleanup_free_ char *name = strndup(*dest, (size_t)(colon - *dest));
	if (cfg->session && strcmp(cfg->session, name) != 0)
		return err_set(err, 0, "DEST '%s' is in session '%s', but --session says '%s'", *dest, name,
			       cfg->session);
	if (config_set(cfg, options_by_key(SBX_K_SESSION), name, "command line", 1, err) < 0)
		return err_wrap(err, "DEST '%s'", *dest);
	*dest = colon + 1;
	return 0;
}

/* Into a session, its own profile's [download] applies unless -p says. */
static int session_profile_config(int argc, char **argv, struct sbx_config *cfg, int *rest,
				  struct sbx_err *err)
{
	_cleanup_free_ char *prof = session_profile(cfg->session);
	_cleanup_free_ char *sess = xstrdup(cfg->session);

	if (!prof || strcmp(cfg->origin[SBX_K_PROFILE], "default") != 0)
		return 0;
	int r = cli_sandbox_config_as(argc, argv, SBX_CMD_DOWNLOAD, usage, prof, cfg, rest, err);
	return r == 0 ? config_set(cfg, options_by_key(SBX_K_SESSION), sess, "command line", 1, err) : r;
}

int cmd_download(int argc, char **argv, struct sbx_err *err)
{
	struct sbx_config cfg;
	const char *dest = NULL;
	int rest, r = cli_sandbox_config(argc, argv, SBX_CMD_DOWNLOAD, usage, &cfg, &rest, err);

	if (r == 0 && argc - rest != 2)
		r = err_set(err, 0, "usage: sbxrun download [--session NAME] URL DEST (or URL SESSION:DEST)");
	if (r == 0) {
		dest = argv[rest + 1];
		r = dest_session(&cfg, &dest, err);
	}
	if (r == 0 && cfg.session)
		r = session_profile_config(argc, argv, &cfg, &rest, err);
	if (r == 0)
		r = download_run(&cfg, argv[rest], dest, err);
	config_free(&cfg);
	return r < 0 ? -1 : 0;
}
