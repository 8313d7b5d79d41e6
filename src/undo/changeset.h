/* changeset.h - a change set: what a `run --project DIR` wrote over DIR,
 * kept on disk under an id (undostore.h) until applied or discarded.
 *
 * changes/ID/upper, work   the overlay's upper and work directories (the
 *                          sandbox wrote upper; whiteouts and opaque
 *                          directories as the kernel's overlay makes them
 *                          with userxattr)
 * changes/ID/manifest      project, device, inode, start, image, and the
 *                          session's name for a session's (text)
 * changes/ID/entries       written when the run ends: a first line
 *                          "sbxrun-entries 2", then one line per change:
 *                          KIND TYPE OLDTYPE MODE OLDMODE SIZE DIGEST FLAGS,
 *                          a tab, PATH, a tab, TARGET, a tab, OLDTARGET (the
 *                          three escaped by changeset_escape, which escapes
 *                          tabs: a name holding spaces, first or last, reads
 *                          back the same)
 *
 * The entries are the one model of a change set: show, diff, export, the
 * MCP tools and apply all read them (and changeset_check's verdicts), so
 * nothing is applied that was not shown. Below a directory the sandbox
 * deleted or replaced, every host entry that goes is an entry of its own
 * (kind D), with its digest: apply deletes nothing it did not list. */
#ifndef SBX_CHANGESET_H
#define SBX_CHANGESET_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "base/err.h"

enum cs_kind { CS_ADDED = 'A', CS_CHANGED = 'C', CS_DELETED = 'D', CS_REPLACED = 'R' };
enum cs_type { CS_FILE = 'f', CS_DIR = 'd', CS_SYMLINK = 'l', CS_OTHER = 'o' };

struct cs_entry {
	char kind;         /* enum cs_kind */
	char type;         /* enum cs_type: what the sandbox left (for a deletion: what was there) */
	char old_type;     /* what the host had when the run ended; 0 for an addition */
	unsigned mode;     /* the permission bits (07777) the sandbox left; 0 for a deletion */
	unsigned old_mode; /* the host's, when the run ended; 0 for an addition */
	uint64_t size;     /* bytes the new file holds (its apparent size) */
	char digest[65];   /* sha256 of the host's file when the run ended, or "-" */
	int moved;         /* the host's file changed after the run began (ctime) */
	int mount;         /* the host's entry is a mount point (another file system
			      or mount below DIR): never crossed, never applied */
	char *path;        /* relative to DIR */
	char *target;      /* a symlink's target as the sandbox left it, or NULL */
	char *old_target;  /* the host's symlink's target, or NULL */
	const char *why;   /* the verdict (changeset_check): NULL when it applies,
			      else why not (a static string) */
	int conflict;      /* with why: the host changed (apply refuses the whole
			      set); without: never applied (a special file) */
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
/* The same, the set gone from the store at once (renamed to a hidden
 * name, no longer an id), its files removed by a detached process at idle
 * priority: what apply does once all of a set is in its project, so that
 * freeing the host's old files (one discard each where the file system is
 * mounted with discard) is not the caller's wait. What a removal killed
 * half way leaves, changeset_sweep removes (prune). */
int changeset_remove_later(struct changeset *cs, struct sbx_err *err);
size_t changeset_sweep(void);
void changeset_free(struct changeset *cs);
/* The ids kept, oldest first; *out is NULL-terminated. */
int changeset_list(char ***out, struct sbx_err *err);
/* The verdict of every entry against the host as it is now (dirfd: DIR,
 * opened by the caller; the set's device and inode are checked): e->why
 * set for each entry that conflicts, is below a mount point, is a special
 * file, or is below an entry that does; *nbad counts them. An entry whose
 * host file changed since the capture, a file new on the host below a
 * directory the set deletes or replaces, a mount point in the way: each is
 * named, never written over. */
int changeset_check(struct changeset *cs, int dirfd, size_t *nbad, struct sbx_err *err);
/* After a caller set e->why of entries of its own (apply: a source it
 * cannot read), what is below each is left out with it, and a deletion of
 * a directory above it that cannot be completed; changeset_check ends so. */
void changeset_spread(struct changeset *cs);
/* The permission bits apply gives a file or a new directory, as git
 * applies them: a new file 0644 or 0755 (any execute bit), a changed file
 * keeps the host's mode unless the execute bit changed, a new directory
 * 0777; then the umask. */
unsigned changeset_applied_mode(const struct cs_entry *e, unsigned umask_bits);
/* The index of the entry at path, or -1 (the entries are sorted). */
ssize_t changeset_find(const struct changeset *cs, const char *path);
/* Its kind and type in words: "added file", "replaced dir". */
const char *changeset_kind_name(char kind);
const char *changeset_type_name(char type);

#endif
