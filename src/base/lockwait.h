/* lockwait.h - the one wait for an flock in sbxrun: bounded, and named to
 * the user while it lasts; and the lock files root takes, which no one
 * else can open. */
#ifndef SBX_LOCKWAIT_H
#define SBX_LOCKWAIT_H

#include "base/err.h"

/* For a lock held over a short change (a name, a directory made). */
#define LOCK_DEADLINE_S 30
/* For a lock held over a long one (an image imported or removed, a cache
 * pruned, a change set applied). */
#define LOCK_DEADLINE_LONG_S 600
/* A test knob (tests/README.md): a deadline in milliseconds shorter than
 * the one a lock has, so that a test waits one out. */
#define LOCK_DEADLINE_ENV "SBX_LOCK_DEADLINE_MS"
/* How long a wait goes unsaid. */
#define LOCK_TELL_MS 1000

/* flock(fd, how) (LOCK_SH or LOCK_EX): at once, or after a wait that says
 * past LOCK_TELL_MS what it waits for (what: a path), and fails past
 * deadline_s seconds (or LOCK_DEADLINE_ENV's shorter one) naming it. */
int lock_wait(int fd, int how, const char *what, int deadline_s, struct sbx_err *err);

/* dirfd/name, a lock file opened (made 0600 where missing). As root, one
 * another user could open (not root's, or readable by others) is replaced
 * first: root never waits on a file another user can flock. */
int lock_open_at(int dirfd, const char *name, struct sbx_err *err);

#endif
