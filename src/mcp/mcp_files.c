/* mcp_files.c - the file tools of `sbxrun mcp`: download (sbxrun's
 * host-side fetch under the profile's [download] policy, in a child so the
 * server keeps answering), open_image, read_file and write_file. Files are
 * opened by fd below the session's root with no symlink followed
 * (base/inroot.c), never by a host path. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/inroot.h"
#include "base/paths.h"
#include "base/util.h"
#include "mcp/mcp_job.h"
#include "mcp/mcp_server.h"
#include "session/session_client.h"

/* path: absolute inside the sandbox, or relative to its workspace. */
static char *in_sandbox(const struct mcp_server *srv, const char *path)
{
	if (path[0] == '/')
		return xstrdup(path);
	return xasprintf("%s/%s", srv->workspace && srv->workspace[0] ? srv->workspace : "", path);
}

static int open_file(struct mcp_server *srv, const char *path, int *rootfd, struct sbx_err *err)
{
	_cleanup_free_ char *ws = NULL;
	_cleanup_free_ char *full = in_sandbox(srv, path);
	struct stat st;

	if (!path[0])
		return err_set(err, 0, "argument 'path': empty");
	if (session_root(srv->session, rootfd, &ws, err) < 0)
		return -1;
	_cleanup_close_ int fd = inroot_open(*rootfd, full, O_RDONLY | O_NONBLOCK, 0, err);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		return err_sys(err, "'%s'", full);
	if (!S_ISREG(st.st_mode))
		return err_set(err, 0, "'%s' is not a regular file", full);
	return steal_fd(fd);
}

/* Reads up to max bytes; *more tells whether the file held more. */
static char *read_upto(int fd, size_t max, size_t *len, int *more, struct sbx_err *err)
{
	char *buf = xmalloc(max + 1);

	*len = 0;
	for (;;) {
		ssize_t n = read(fd, buf + *len, max + 1 - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return err_sys(err, "read"), NULL;
		}
		*len += (size_t)n;
		if (n == 0 || *len == max + 1)
			break;
	}
	*more = *len > max;
	if (*more)
		*len = max;
	return buf;
}

void mcp_open_image(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a)
{
	struct sbx_err err = { 0 };
	int rootfd = -1, more;
	size_t len;
	_cleanup_close_ int fd = open_file(srv, a->path, &rootfd, &err);
	_cleanup_free_ char *buf = fd < 0 ? NULL : read_upto(fd, MCP_IMAGE_MAX, &len, &more, &err);

	if (rootfd >= 0)
		close(rootfd);
	if (!buf)
		return mcp_tool_error(srv, id, "open_image: %s", err.msg);
	if (more)
		return mcp_tool_error(srv, id, "open_image: '%s' is larger than %u MiB", a->path, MCP_IMAGE_MAX >> 20);
	const char *mime = mcp_image_mime((const unsigned char *)buf, len);
	if (!mime)
		return mcp_tool_error(srv, id, "open_image: '%s' is not a PNG, JPEG, WebP or GIF image", a->path);
	_cleanup_free_ char *b64 = mcp_base64((const unsigned char *)buf, len);
	struct json_object *r = json_object_new_object(), *c = json_object_new_array(), *img = json_object_new_object();
	json_object_object_add(img, "type", json_object_new_string("image"));
	json_object_object_add(img, "data", json_object_new_string(b64));
	json_object_object_add(img, "mimeType", json_object_new_string(mime));
	json_object_array_add(c, img);
	json_object_object_add(r, "content", c);
	mcp_reply(srv, id, r);
}

void mcp_read_file(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a)
{
	struct sbx_err err = { 0 };
	int rootfd = -1, more;
	size_t len;
	_cleanup_close_ int fd = open_file(srv, a->path, &rootfd, &err);
	_cleanup_free_ char *buf = fd < 0 ? NULL : read_upto(fd, MCP_OUTPUT_CAP, &len, &more, &err);

	if (rootfd >= 0)
		close(rootfd);
	if (!buf)
		return mcp_tool_error(srv, id, "read_file: %s", err.msg);
	struct mcp_out o = { .data = buf, .len = len };
	_cleanup_free_ char *text = mcp_out_text(&o);
	_cleanup_free_ char *all = xasprintf("%s%s", text, more ? "\n[... the file goes on; only its first 256 KiB are shown ...]" : "");
	mcp_reply(srv, id, mcp_tool_text(all, 0, NULL));
}

static int write_into(struct mcp_server *srv, const char *path, const char *content, struct sbx_err *err)
{
	_cleanup_free_ char *ws = NULL;
	_cleanup_free_ char *full = in_sandbox(srv, path);
	_cleanup_close_ int rootfd = -1;
	const char *name;

	if (!path[0])
		return err_set(err, 0, "argument 'path': empty");
	if (session_root(srv->session, &rootfd, &ws, err) < 0)
		return -1;
	_cleanup_close_ int dir = inroot_parent(rootfd, full, &name, err);
	_cleanup_close_ int mem = dir < 0 ? -1 : memfd_create("sbxrun-mcp-write", MFD_CLOEXEC);
	if (dir < 0)
		return -1;
	if (mem < 0 || write_all(mem, content, strlen(content)) < 0 || lseek(mem, 0, SEEK_SET) < 0)
		return err_sys(err, "write_file: buffer");
	paths_as_sandbox_owner(1);
	long long n = inroot_write_from(dir, name, mem, 0644, err);
	paths_as_sandbox_owner(0);
	return n < 0 ? -1 : 0;
}

void mcp_write_file(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a)
{
	struct sbx_err err = { 0 };

	if (write_into(srv, a->path, a->content, &err) < 0)
		return mcp_tool_error(srv, id, "write_file: %s", err.msg);
	_cleanup_free_ char *msg = xasprintf("wrote %zu bytes to %s", strlen(a->content), a->path);
	mcp_reply(srv, id, mcp_tool_text(msg, 0, NULL));
}

/* The child: fetches, reports "" or the error on the pipe, exits. */
static __attribute__((noreturn)) void download_child(struct mcp_server *srv, const struct mcp_args *a,
						      const char *dest, int report)
{
	struct sbx_config c = *srv->cfg;
	struct sbx_err err = { 0 };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	prctl(PR_SET_PDEATHSIG, SIGTERM); /* dies with the server, its temporary name removed */
	dup2(null, 0); /* stdout is the protocol's: nothing else may reach it */
	dup2(null, 1);
	if (report > 3) /* nor keep the server's connections open */
		syscall(SYS_close_range, 3, report - 1, 0);
	syscall(SYS_close_range, report + 1, ~0U, 0);
	c.session = srv->session;
	c.sha256 = NULL;
	sigset_t term; /* the server's mask blocks it for its signalfd: cancel sends it */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &term, NULL);
	int r = srv->download(&c, a->url, dest, &err);
	(void)!write(report, r < 0 ? err.msg : "", r < 0 ? strlen(err.msg) + 1 : 1);
	_exit(r < 0 ? 1 : 0);
}

void mcp_download_start(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a)
{
	const char *ws = srv->workspace ? srv->workspace : "", *dest = a->filepath;
	size_t wl = strlen(ws);
	int p[2];

	if (dest[0] == '/') {
		if (!wl || strncmp(dest, ws, wl) != 0 || dest[wl] != '/')
			return mcp_tool_error(srv, id, "argument 'filepath': '%s' is not inside the workspace%s%s",
					      dest, wl ? " " : "", ws);
		dest += wl + 1;
	}
	struct mcp_job *j = mcp_job_new(srv, MCP_JOB_DOWNLOAD, id, NULL);
	if (!j)
		return mcp_tool_error(srv, id, "too many calls running at once (%d)", MCP_MAX_JOBS);
	if (pipe2(p, O_CLOEXEC) < 0 || (j->pid = fork()) < 0) {
		mcp_tool_error(srv, id, "download: %s", strerror(errno));
		return mcp_job_end(j);
	}
	if (j->pid == 0) {
		close(p[0]);
		download_child(srv, a, dest, p[1]);
	}
	close(p[1]);
	j->pipe[0] = p[0];
	j->what = xasprintf("downloaded %s to %s", a->url, a->filepath);
	const char *slash = strrchr(dest, '/');
	j->dest_dir = xasprintf("%s/%.*s", ws, slash ? (int)(slash - dest) : 0, dest);
}

/* Whether pid ended within ms (then reaped). */
static int ended_within(pid_t pid, int ms)
{
	_cleanup_close_ int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = { pfd, POLLIN, 0 };

	if (pfd < 0 || poll(&p, 1, ms) != 1)
		return 0;
	waitpid(pid, NULL, 0);
	return 1;
}

/* SIGTERM lets the child remove what it made (its staged file, and the
 * temporary name in the workspace, which it finishes or removes before it
 * ends); one still busy after 2 s is killed and that name removed here. */
void mcp_download_cancel(struct mcp_server *srv, struct mcp_job *j)
{
	_cleanup_free_ char *ws = NULL;
	_cleanup_close_ int rootfd = -1;
	struct sbx_err err;
	char tmp[64];

	if (j->pid <= 0)
		return;
	kill(j->pid, SIGTERM);
	if (!ended_within(j->pid, 2000)) {
		kill(j->pid, SIGKILL);
		waitpid(j->pid, NULL, 0);
	}
	snprintf(tmp, sizeof(tmp), SBX_DOWNLOAD_TMP_NAME, (int)j->pid);
	j->pid = -1;
	if (!j->dest_dir || session_root(srv->session, &rootfd, &ws, &err) < 0)
		return;
	_cleanup_close_ int dir = inroot_open(rootfd, j->dest_dir, O_PATH | O_DIRECTORY, 0, &err);
	if (dir < 0)
		return;
	paths_as_sandbox_owner(1);
	unlinkat(dir, tmp, 0);
	paths_as_sandbox_owner(0);
}

void mcp_download_handle(struct mcp_server *srv, struct mcp_job *j)
{
	char msg[1200];
	ssize_t n = read(j->pipe[0], msg, sizeof(msg) - 1);
	int status = 0;

	msg[n > 0 ? n : 0] = '\0';
	waitpid(j->pid, &status, 0);
	j->pid = -1;
	if (n > 0 && !msg[0] && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		mcp_reply(srv, j->id, mcp_tool_text(j->what, 0, NULL));
	else
		mcp_tool_error(srv, j->id, "download: %s", n > 1 ? msg : "the download ended unexpectedly");
	mcp_job_end(j);
}
