/* options.h - the one table of command-line options and profile keys.
 * The CLI parser, --help, the profile loader, `profile show`, the man page
 * and the completions all read it (docs/style.md: one table, no drift). */
#ifndef SBX_OPTIONS_H
#define SBX_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum sbx_key {
	SBX_K_PROFILE, SBX_K_INHERIT, SBX_K_IMAGE, SBX_K_USER, SBX_K_HOSTNAME,
	SBX_K_WORKDIR, SBX_K_ENV, SBX_K_WORKSPACE, SBX_K_STORAGE, SBX_K_SECCOMP,
	SBX_K_PTRACE, SBX_K_TIER, SBX_K_TIMEOUT, SBX_K_MEMORY, SBX_K_DISK, SBX_K_PIDS,
	SBX_K_CPUS, SBX_K_FILE_SIZE, SBX_K_OPEN_FILES, SBX_K_IDLE, SBX_K_LIFETIME,
	SBX_K_ENFORCE, SBX_K_EGRESS, SBX_K_ALLOW, SBX_K_CA, SBX_K_PROXY_ENV,
	SBX_K_DL_ALLOW, SBX_K_DL_MAX_SIZE, SBX_K_DL_TIMEOUT, SBX_K_DL_MIN_SPEED,
	SBX_K_DL_MIN_SPEED_TIME, SBX_K_BIND, SBX_K_TTY, SBX_K_RAW_TTY, SBX_K_JSON,
	SBX_K_JSON_FD, SBX_K_EVENTS, SBX_K_SESSION, SBX_K_SHA256, SBX_K_LISTEN,
	SBX_K_HELP, SBX_K_VERBOSE, SBX_K_QUIET, SBX_K_TRACE, SBX_K_VERSION, SBX_K_NAME, SBX_K_SUITE,
	SBX_K_FORCE, SBX_K_EXPORT_OUTPUT, SBX_K_EXPORT_WORKSPACE, SBX_K_EXPORT_SNAPSHOT, SBX_K_MTIME,
	SBX_K_EXPORT_FORMAT, SBX_K_MAX_SIZE,
	SBX_K_FORMAT, SBX_K_KIND, SBX_K_IMAGE_REF, SBX_K_OUTPUT,
	SBX_K_AUTH_FILE, SBX_K_HEADER_TIMEOUT, SBX_K_UNREAD_MAX, SBX_K_ANSWER_TIMEOUT,
	SBX_K_COPY, SBX_K_OUT, SBX_K_PKG_NPM, SBX_K_PKG_TIMEOUT,
	SBX_K_PKG_ALLOW, SBX_K_PKG_DENY, SBX_K_PKG_MIN_AGE, SBX_K_PKG_OFFLINE,
	SBX_K_PKG_CACHE_MAX, SBX_K_PKG_CACHE, SBX_K_CACHE_SYSTEM, SBX_K_CACHE_MAX, SBX_K_CACHE_ALL,
	SBX_K_CACHE_OLDER,
	SBX_K_PKG_PYPI, SBX_K_PKG_INDEX_MAX_AGE, SBX_K_PKG_INDEX_MAX_STALE, SBX_K_PKG_NOT_AFTER, SBX_K_PKG_MALICIOUS,
	SBX_K_PROJECT, SBX_K_APPLY, SBX_K_DISCARD, SBX_K_CHANGES_MAX, SBX_K_FORCE_REST,
	SBX_K_EXACT_MODES, SBX_K_APPLY_EXACT_MODES,
	SBX_K_CHANGES_OLDER, SBX_K_CHANGES_ALL, SBX_K_SHOW_ALL, SBX_K_PATCH,
	SBX_K_FROM, SBX_K_NET_FOR, SBX_K_LS_JSON, SBX_K_NET_ASK, SBX_K_ASK_TIMEOUT,
	SBX_K_PKG_GO, SBX_K_PKG_GO_SUMDB,
	SBX_K_CREDENTIAL,
	SBX_K_PKG_MODE,
	SBX_K_PKG_CARGO,
	SBX_K_PKG_MAVEN,
	SBX_K__COUNT
};

enum sbx_argkind {
	SBX_ARG_NONE,      /* a flag */
	SBX_ARG_STRING,
	SBX_ARG_NAME,      /* profile/image/session name */
	SBX_ARG_PATH,      /* absolute path inside the sandbox */
	SBX_ARG_DURATION,
	SBX_ARG_SIZE,
	SBX_ARG_COUNT,
	SBX_ARG_CPUS,
	SBX_ARG_ENUM,
	SBX_ARG_ENV,       /* K=V, or NAME on the command line */
	SBX_ARG_BIND,      /* SRC:DST[:rw] */
	SBX_ARG_HOST,      /* HOST, *.suffix, HOST:PORT, @set */
	SBX_ARG_FD,
	SBX_ARG_COPY,      /* PATH[:DEST] (run --copy) */
	SBX_ARG_PACKAGE,   /* [ECO:]GLOB, a package rule */
	SBX_ARG_CRED,      /* VAR=SOURCE HOST[:PORT][/PATH] [...]: a [credentials] line */
};

/* Subcommands an option belongs to, as a bit mask: one bit per command that
 * takes options of its own (a group such as `image` has none: its verbs do). */
typedef uint64_t sbx_cmds;
#define SBX_CMD_RUN (UINT64_C(1) << 0)
#define SBX_CMD_SHELL (UINT64_C(1) << 1)
#define SBX_CMD_SESSION_START (UINT64_C(1) << 2)
#define SBX_CMD_DOWNLOAD (UINT64_C(1) << 3)
#define SBX_CMD_MCP (UINT64_C(1) << 4)
#define SBX_CMD_PROXY (UINT64_C(1) << 5) /* sbxrun proxy */
#define SBX_CMD_PROFILE_EXPORT (UINT64_C(1) << 6) /* sbxrun profile export */
#define SBX_CMD_SESSION_LS (UINT64_C(1) << 7)
#define SBX_CMD_SESSION_STOP (UINT64_C(1) << 8)
#define SBX_CMD_SESSION_RM (UINT64_C(1) << 9)
#define SBX_CMD_IMAGE_BUILD (UINT64_C(1) << 10)
#define SBX_CMD_IMAGE_IMPORT (UINT64_C(1) << 11)
#define SBX_CMD_IMAGE_LS (UINT64_C(1) << 12)
#define SBX_CMD_IMAGE_RM (UINT64_C(1) << 13)
#define SBX_CMD_IMAGE_INSPECT (UINT64_C(1) << 14)
#define SBX_CMD_IMAGE_EXPORT (UINT64_C(1) << 15)
#define SBX_CMD_PROFILE_LS (UINT64_C(1) << 16)
#define SBX_CMD_PROFILE_SHOW (UINT64_C(1) << 17)
#define SBX_CMD_CP (UINT64_C(1) << 18)
#define SBX_CMD_DOCTOR (UINT64_C(1) << 19)
#define SBX_CMD_MAIN (UINT64_C(1) << 20) /* sbxrun's own, before the command */
#define SBX_CMD_CACHE_LS (UINT64_C(1) << 21)
#define SBX_CMD_CACHE_DU (UINT64_C(1) << 22)
#define SBX_CMD_CACHE_PRUNE (UINT64_C(1) << 23)
#define SBX_CMD_CACHE_FILL (UINT64_C(1) << 24)
#define SBX_CMD_CHANGES_LS (UINT64_C(1) << 25)
#define SBX_CMD_CHANGES_SHOW (UINT64_C(1) << 26)
#define SBX_CMD_CHANGES_DIFF (UINT64_C(1) << 27)
#define SBX_CMD_CHANGES_APPLY (UINT64_C(1) << 28)
#define SBX_CMD_CHANGES_DISCARD (UINT64_C(1) << 29)
#define SBX_CMD_CHANGES_PRUNE (UINT64_C(1) << 30)
#define SBX_CMD_SESSION_SNAPSHOT (UINT64_C(1) << 31)
#define SBX_CMD_SESSION_SNAPSHOTS (UINT64_C(1) << 32)
#define SBX_CMD_SESSION_SNAPSHOT_RM (UINT64_C(1) << 33)
#define SBX_CMD_SESSION_RESTORE (UINT64_C(1) << 34)
#define SBX_CMD_CHANGES_EXPORT (UINT64_C(1) << 35)
#define SBX_CMD_NET_ALLOW (UINT64_C(1) << 36)
#define SBX_CMD_NET_DENY (UINT64_C(1) << 37)
#define SBX_CMD_NET_PENDING (UINT64_C(1) << 38)
#define SBX_CMD_ALL (~UINT64_C(0)) /* every command */
#define SBX_CMD_SESSION_SNAP (SBX_CMD_SESSION_SNAPSHOT | SBX_CMD_SESSION_SNAPSHOTS | SBX_CMD_SESSION_SNAPSHOT_RM | SBX_CMD_SESSION_RESTORE)
#define SBX_CMD_SANDBOX (SBX_CMD_RUN | SBX_CMD_SHELL | SBX_CMD_SESSION_START)
#define SBX_CMD_CACHE (SBX_CMD_CACHE_LS | SBX_CMD_CACHE_DU | SBX_CMD_CACHE_PRUNE | SBX_CMD_CACHE_FILL)

#define SBX_OPT_REPEAT 1u /* may be given many times; values accumulate */
#define SBX_OPT_LOCAL 2u  /* no field of struct sbx_config: the command reads it */

struct sbx_option {
	enum sbx_key key;
	const char *lname;        /* command-line long name, NULL if profile-only */
	char sname;               /* short name or 0 */
	const char *section;      /* profile section, NULL if command-line-only */
	const char *pkey;         /* profile key */
	enum sbx_argkind kind;
	const char *const *choices; /* SBX_ARG_ENUM: NULL-terminated */
	unsigned flags;
	sbx_cmds cmds;            /* SBX_CMD_* bits */
	size_t offset;            /* field in struct sbx_config */
	const char *metavar;
	const char *help;
};

extern const struct sbx_option sbx_options[];
extern const size_t sbx_options_count;

/* A command line's command: a top-level one (group NULL) such as `run` or
 * `image`, or a verb of a group such as `image export`. A group's own mask
 * is 0; it lists its verbs. --help, the man page and the completions are
 * written from this table and sbx_options, nothing else. */
struct sbx_command {
	const char *group;    /* "image" for `image export`, NULL at the top */
	const char *name;
	sbx_cmds mask;        /* SBX_CMD_* bit of its options, 0 for a group */
	const char *operands; /* what follows the options, for the usage line */
	const char *summary;  /* one line */
};

extern const struct sbx_command sbx_commands[];
extern const size_t sbx_commands_count;

/* The command whose options are mask (one bit), or NULL. */
const struct sbx_command *options_command(sbx_cmds mask);
/* A top-level command (group NULL) or a group's verb, by name, or NULL. */
const struct sbx_command *options_command_named(const char *group, const char *name);

const struct sbx_option *options_by_key(enum sbx_key key);
const struct sbx_option *options_by_profile_key(const char *section, const char *key);
/* Whether a profile section name exists at all. */
int options_section_known(const char *section);

#endif
