/* landlock.h - the landlock tier (tier.h): where no user namespace can be
 * made at all, the command runs on the machine's own file system, confined
 * by a Landlock domain (read and execute beneath what holds no secret;
 * read and write in a private workspace and tmp only; TCP bind and connect
 * to nothing, or to the proxy's port alone), a seccomp filter on socket
 * families, and whatever else a full sandbox has that needs no namespace
 * (no_new_privs, sbxrun's own filter, rlimits, the timeout). landlock.c
 * builds the domain on the host side; the sandbox's processes restrict
 * themselves with it (contain.c's LANDLOCK rows). */
#ifndef SBX_LANDLOCK_H
#define SBX_LANDLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct sbx_plan;

/* What the landlock tier of one run holds; made by landlock_prepare. */
struct sbx_landlock {
	int abi;        /* the kernel's Landlock ABI (1 and up) */
	int ruleset;    /* the domain to restrict to, or -1 */
	int egress;     /* enum sbx_egress the socket filter allows */
	uint16_t port;  /* packages: the proxy's loopback port, the one connect allowed */
	char *dir;      /* the private directory (0700) holding ws/ and tmp/, removed after */
	char *ws;       /* dir/ws: the workspace, the command's working directory and HOME */
	char *tmp;      /* dir/tmp: its TMPDIR */
	int door;       /* packages: the proxy's listening socket on 127.0.0.1:port, or -1 */
};

/* The kernel's Landlock ABI, or -1 with errno (EOPNOTSUPP: disabled at
 * boot; ENOSYS: not built in). */
int landlock_abi(void);
/* Why the landlock tier cannot run plan here (an option it cannot keep,
 * a kernel without what it needs), as err; 0 when it can. */
int landlock_check(const struct sbx_plan *plan, int abi, struct sbx_err *err);
/* Host side, before the fork: the private directory and the domain. */
int landlock_prepare(const struct sbx_plan *plan, struct sbx_landlock *ll, struct sbx_err *err);
/* The host side's fds closed (the sandbox has ended). */
void landlock_close(struct sbx_landlock *ll);
/* Those, and the private directory removed (after --out). */
void landlock_release(struct sbx_landlock *ll);
/* In the sandbox's init (no_new_privs set): restricts itself to the
 * domain; what it starts inherits it. */
int landlock_restrict(const struct sbx_landlock *ll, struct sbx_err *err);
/* In the command, before exec (ABI 6 and up): a domain below its init's
 * that lets no signal and no abstract unix socket reach outside it, so the
 * command cannot stop its init or reach the host side's processes. */
int landlock_scope_command(const struct sbx_landlock *ll, struct sbx_err *err);
/* A seccomp filter on top of sbxrun's own: socket() of no family but
 * AF_INET/AF_INET6 stream sockets under packages egress (everything under
 * full), and nothing else; socketpair stays (AF_UNIX alone, by the main
 * filter's families and the kernel). */
int landlock_socket_filter(const struct sbx_landlock *ll, struct sbx_err *err);
/* Host side, a child subreaper: every process left of the sandbox
 * (orphans come to us; there is no pid namespace to end them) killed and
 * reaped, until none is left. */
void landlock_reap_all(void);
/* A one-line account of what the tier confines, for the user. */
const char *landlock_describe(const struct sbx_landlock *ll, char *buf, size_t size);

#endif
