/* undostore.c - the per-user store of change sets (undostore.h). */
#define _GNU_SOURCE
#include "undo/undostore.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/paths.h"
#include "base/util.h"
#include "sandbox/diskuse.h"
#include "undo/snapshot.h"

int undostore_changes_dir(char **out, struct sbx_err *err)
{
	_cleanup_free_ char *data = NULL;

	if (paths_data_dir(&data, err) < 0)
		return -1;
	char *p = xasprintf("%s/changes", data);
	if (mkdir(p, 0700) < 0 && errno != EEXIST) {
		err_sys(err, "create '%s'", p);
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int undostore_usage(uint64_t *out, struct sbx_err *err)
{
	_cleanup_free_ char *dir = NULL;

	*out = 0;
	if (undostore_changes_dir(&dir, err) < 0)
		return -1;
	if (diskuse_owned_bytes_at(AT_FDCWD, dir, out) < 0)
		return err_sys(err, "measure '%s'", dir);
	/* one cap over what the user keeps: change sets and snapshots */
	*out += snapshot_usage();
	return 0;
}

int undostore_id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 64 || id[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9') || id[i] == '-'))
			return 0;
	return 1;
}

uint64_t undostore_bytes(const char *dir)
{
	uint64_t b = 0;
	return diskuse_owned_bytes_at(AT_FDCWD, dir, &b) < 0 ? 0 : b;
}

int64_t undostore_id_time(const char *id)
{
	struct tm tm = { 0 };
	char *end = strptime(id, "%Y%m%d-%H%M%S", &tm);
	return end && (*end == '-' || !*end) ? (int64_t)timegm(&tm) : 0;
}
