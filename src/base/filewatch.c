/* filewatch.c - inotify on the directories of a few files. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "base/filewatch.h"
#include "base/util.h"

int filewatch_open(struct filewatch *w, const char *const *paths, size_t n, struct sbx_err *err)
{
	memset(w, 0, sizeof(*w));
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0)
		return err_sys(err, "inotify_init1");
	for (size_t i = 0; i < n && w->n < FILEWATCH_MAX; i++) {
		if (!paths[i] || paths[i][0] != '/')
			continue;
		_cleanup_free_ char *dir = xstrdup(paths[i]);
		char *slash = strrchr(dir, '/');
		*slash = '\0';
		int wd = inotify_add_watch(w->fd, dir[0] ? dir : "/",
					   IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM |
						   IN_ATTRIB | IN_ONLYDIR);
		if (wd < 0)
			continue;
		w->wd[w->n] = wd;
		w->idx[w->n] = i;
		w->name[w->n++] = xstrdup(slash + 1);
	}
	return 0;
}

int filewatch_fd(const struct filewatch *w)
{
	return w->fd;
}

unsigned filewatch_changed(struct filewatch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	unsigned changed = 0;
	ssize_t len;

	while ((len = read(w->fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			for (size_t i = 0; i < w->n; i++)
				if (ev->wd == w->wd[i] && ev->len && strcmp(ev->name, w->name[i]) == 0)
					changed |= 1u << w->idx[i];
			p += sizeof(*ev) + ev->len;
		}
	}
	return changed;
}

void filewatch_close(struct filewatch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	for (size_t i = 0; i < w->n; i++)
		free(w->name[i]);
	memset(w, 0, sizeof(*w));
	w->fd = -1;
}
