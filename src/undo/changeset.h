/* changeset.h - a change set: what a `run --project DIR` wrote over DIR,
 * kept on disk under an id (undostore.h) until applied or discarded.
 *
 * changes/ID/upper, work   the overlay's upper and work directories (the
 *                          sandbox wrote upper; whiteouts and opaque
 *                          directories as the kernel's overlay makes them
 *                          with userxattr)
 * changes/ID/manifest      project, device, inode, start, image, and the
 *                          session's name for a session's (text)
 * changes/ID/entries       one line per change, written when the run ends:
 *                          KIND TYPE SIZE DIGEST FLAG PATH, PATH escaped
 *                          (changeset_escape) and last */
#ifndef SBX_CHANGESET_H
#define SBX_CHANGESET_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "base/err.h"

enum cs_kind { CS_ADDED = 'A', CS_CHANGED = 'C', CS_DELETED = 'D', CS_REPLACED = 'R' };
enum cs_type { CS_FILE = 'f', CS_DIR = 'd', CS_SYMLINK = 'l', CS_OTHER = 'o' };

struct cs_entry {
	char kind;       /* enum cs_kind */
	char type;       /* enum cs_type: what the sandbox left (for a deletion: what was there) */
	uint64_t size;   /* bytes the new file holds (its apparent size) */
	char digest[65]; /* sha256 of the host's file when the run ended, or "-" */
	int moved;       /* the host's file changed after the run began (ctime) */
	char *path;      /* relative to DIR */
};

struct changeset {
	char *id;
	char *dir;       /* the change set's directory */
	char *project;   /* DIR, absolute */
	dev_t dev;
	ino_t ino;
	int64_t start_s, start_ns;
	char *image;
	char *session;   /* the session it belongs to, or NULL (a run's) */
	struct cs_entry *e;
	size_t n;
	size_t added, changed, deleted;
	int captured;    /* entries was written */
	int live;        /* a sandbox still writes it: entries are as of now (project.h) */
	int lock_fd;     /* with locked: the shared lock changeset_create takes */
	int locked;
};

/* Makes a new change set for DIR (which must be a directory: the error
 * names it): id, directory, upper and work (0700, owned by uid:gid), the
 * manifest (session: the session's name or NULL; start: when the sandbox
 * began writing it, NULL for now; a fork's is its snapshot's). *dirfd is DIR opened
 * as a directory. A shared lock on the set's directory is held from its
 * making until changeset_free: in use, never captured under a sandbox. */
int changeset_create(const char *project, const char *image, const char *session,
		     const struct timespec *start, uid_t uid, gid_t gid, struct changeset *cs, int *dirfd,
		     struct sbx_err *err);
/* Walks upper against DIR and records each change with the host file's
 * digest, sorted by path; capture also writes entries (after the run). */
int changeset_scan(struct changeset *cs, struct sbx_err *err);
int changeset_capture(struct changeset *cs, struct sbx_err *err);
/* Reads change set id (manifest and entries). */
int changeset_load(const char *id, struct changeset *cs, struct sbx_err *err);
/* Removes its directory. */
int changeset_remove(struct changeset *cs, struct sbx_err *err);
void changeset_free(struct changeset *cs);
/* The ids kept, oldest first; *out is NULL-terminated. */
int changeset_list(char ***out, struct sbx_err *err);
/* PATH as it is written in entries and shown: '\\' and bytes below 0x20
 * and 0x7f escaped (\\n, \\t, \\xNN), so a name with a newline is one line. */
char *changeset_escape(const char *s);
/* The inverse; NULL on a malformed escape. */
char *changeset_unescape(const char *s);
/* Bytes allocated below the change set's directory. */
uint64_t changeset_bytes(const struct changeset *cs);
/* Its kind and type in words: "added file", "replaced dir". */
const char *changeset_kind_name(char kind);
const char *changeset_type_name(char type);

#endif
