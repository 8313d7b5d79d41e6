/* options.c - the option table itself: every CLI option and profile key once. */
#include "base/options.h"

#include <stddef.h>
#include <string.h>

#include "base/config.h"

#define F(field) offsetof(struct sbx_config, field)
#define R SBX_OPT_REPEAT
#define SB SBX_CMD_SANDBOX
#define SBD (SBX_CMD_SANDBOX | SBX_CMD_DOWNLOAD)
#define PX SBX_CMD_PROXY
#define PE SBX_CMD_PROFILE_EXPORT
#define L SBX_OPT_LOCAL
#define IX SBX_CMD_IMAGE_EXPORT
#define CF SBX_CMD_CACHE_FILL

static const char *const export_formats[] = { "tar", "oci", "docker", NULL };
static const char *const net_for[] = { "once", "session", "always", NULL };

/* clang-format off */
const struct sbx_option sbx_options[] = {
{ SBX_K_PROFILE,    "profile",  'p', NULL, NULL, SBX_ARG_NAME, NULL, 0, SBD | SBX_CMD_MCP | PX | PE | SBX_CMD_CACHE | SBX_CMD_CHANGES_PRUNE, F(profile), "NAME",
  "profile to apply (a name, or a path when it holds a '/')" },
{ SBX_K_INHERIT,    NULL, 0, "sandbox", "inherit", SBX_ARG_NAME, NULL, 0, 0, F(inherit), "NAME",
  "profile this one is layered on" },
{ SBX_K_IMAGE,      "image",    'i', "sandbox", "image", SBX_ARG_NAME, NULL, 0, SB | SBX_CMD_MCP | PX | PE | CF, F(image), "NAME",
  "image to run (see 'sbxrun image ls')" },
{ SBX_K_USER,       "user",     'u', "sandbox", "user", SBX_ARG_STRING, NULL, 0, SB, F(user), "NAME",
  "the user commands run as beside the sandbox's root (the image's, or made at start with HOME and pip, npm, go set up for it), or root; run --session: root or the session's user" },
{ SBX_K_HOSTNAME,   "hostname", 0,   "sandbox", "hostname", SBX_ARG_STRING, NULL, 0, SB, F(hostname), "NAME",
  "host name inside the sandbox" },
{ SBX_K_WORKDIR,    "workdir",  'w', "sandbox", "workdir", SBX_ARG_PATH, NULL, 0, SB, F(workdir), "DIR",
  "working directory inside the sandbox" },
{ SBX_K_ENV,        "env",      'e', "sandbox", "env", SBX_ARG_ENV, NULL, R, SB, F(env), "K=V",
  "set a variable (or pass the caller's NAME)" },
{ SBX_K_WORKSPACE,  NULL, 0, "sandbox", "workspace", SBX_ARG_PATH, NULL, 0, 0, F(workspace), "DIR",
  "where the quota'd workspace is mounted inside" },
{ SBX_K_STORAGE,    NULL, 0, "sandbox", "storage", SBX_ARG_ENUM, sbx_storage_names, 0, 0, F(storage), "KIND",
  "writable layer and workspace in memory (tmpfs) or on disk" },
{ SBX_K_SECCOMP,    NULL, 0, "sandbox", "seccomp", SBX_ARG_ENUM, sbx_seccomp_names, 0, 0, F(seccomp), "MODE",
  "system call filter (default, or off)" },
{ SBX_K_PTRACE,     NULL, 0, "sandbox", "ptrace", SBX_ARG_ENUM, sbx_yesno_names, 0, 0, F(ptrace), "yes|no",
  "allow ptrace among the sandbox's own processes" },
{ SBX_K_TIER,       NULL, 0, "sandbox", "tier", SBX_ARG_ENUM, sbx_tier_names, 0, 0, F(tier), "TIER",
  "the lowest tier accepted: landlock (no user namespace: the machine's own files under Landlock), nested (inside a container: its host name, a /proc without its processes) or full" },
{ SBX_K_TIMEOUT,    "timeout",  0,   "limits", "timeout", SBX_ARG_DURATION, NULL, 0, SB, F(timeout_ms), "DURATION",
  "wall-clock limit per command (exit 124), or none" },
{ SBX_K_MEMORY,     "memory",   0,   "limits", "memory", SBX_ARG_SIZE, NULL, 0, SB, F(memory), "SIZE",
  "memory limit, or unlimited" },
{ SBX_K_DISK,       "disk",     0,   "limits", "disk", SBX_ARG_SIZE, NULL, 0, SB, F(disk), "SIZE",
  "quota of the writable layer and workspace, or unlimited" },
{ SBX_K_PIDS,       "pids",     0,   "limits", "pids", SBX_ARG_COUNT, NULL, 0, SB, F(pids), "N",
  "process limit, or unlimited" },
{ SBX_K_CPUS,       "cpus",     0,   "limits", "cpus", SBX_ARG_CPUS, NULL, 0, SB, F(cpus_milli), "N",
  "CPU limit (e.g. 0.5, 2), or unlimited" },
{ SBX_K_FILE_SIZE,  NULL, 0, "limits", "file_size", SBX_ARG_SIZE, NULL, 0, 0, F(file_size), "SIZE",
  "largest file a process may write, or unlimited" },
{ SBX_K_OPEN_FILES, NULL, 0, "limits", "open_files", SBX_ARG_COUNT, NULL, 0, 0, F(open_files), "N",
  "open files per process, or unlimited" },
{ SBX_K_IDLE,       NULL, 0, "limits", "idle", SBX_ARG_DURATION, NULL, 0, 0, F(idle_ms), "DURATION",
  "a session ends after this long without commands" },
{ SBX_K_LIFETIME,   NULL, 0, "limits", "lifetime", SBX_ARG_DURATION, NULL, 0, 0, F(lifetime_ms), "DURATION",
  "a session ends after this long" },
{ SBX_K_ENFORCE,    NULL, 0, "limits", "enforce", SBX_ARG_ENUM, sbx_enforce_names, 0, 0, F(enforce), "MODE",
  "best: fall back where a limit cannot be exact; strict: refuse" },
{ SBX_K_EGRESS,     "net",      0,   "network", "egress", SBX_ARG_ENUM, sbx_egress_names, 0, SB, F(egress), "MODE",
  "network: none, packages, or full" },
{ SBX_K_ALLOW,      "allow",    0,   "network", "allow", SBX_ARG_HOST, NULL, R, SB | PX, F(allow), "HOST",
  "also allow HOST through the packages proxy" },
{ SBX_K_CA,         NULL, 0, "network", "ca", SBX_ARG_ENUM, sbx_ca_names, 0, 0, F(ca), "FROM",
  "CA bundle the sandbox trusts: host (also) or image (only)" },
{ SBX_K_NET_ASK,    NULL, 0, "network", "ask", SBX_ARG_ENUM, sbx_yesno_names, 0, 0, F(net_ask), "yes|no",
  "in a session, hold a connection to a host no rule allows or refuses and ask (sbxrun net pending, net allow) instead of refusing it" },
{ SBX_K_ASK_TIMEOUT, NULL, 0, "network", "ask_timeout", SBX_ARG_DURATION, NULL, 0, 0, F(ask_timeout_ms), "DURATION",
  "how long a held connection waits for an answer before it is refused (default 30s)" },
{ SBX_K_CREDENTIAL, NULL, 0, "credentials", "VAR", SBX_ARG_CRED, NULL, R, 0, F(creds), "SOURCE HOST[:PORT][/PATH] [header=NAME] [scheme=Bearer|token|basic]",
  "VAR inside holds a placeholder; the proxy puts the secret (SOURCE env:NAME or file:PATH, the user's, 0600) on requests to HOST only (docs/egress.md)" },
{ SBX_K_PROXY_ENV,  NULL, 0, "network", "proxy_env", SBX_ARG_ENUM, sbx_proxy_env_names, 0, 0, F(proxy_env), "WHO",
  "point package tools (tools) or everything (all) at the proxy" },
{ SBX_K_DL_ALLOW,   NULL, 0, "download", "allow", SBX_ARG_HOST, NULL, R, 0, F(dl_allow), "HOST",
  "hosts 'sbxrun download' may fetch from" },
{ SBX_K_DL_MAX_SIZE, NULL, 0, "download", "max_size", SBX_ARG_SIZE, NULL, 0, 0, F(dl_max_size), "SIZE",
  "largest download" },
{ SBX_K_DL_TIMEOUT, NULL, 0, "download", "timeout", SBX_ARG_DURATION, NULL, 0, 0, F(dl_timeout_ms), "DURATION",
  "deadline of one download, redirects included (default 10m)" },
{ SBX_K_DL_MIN_SPEED, NULL, 0, "download", "min_speed", SBX_ARG_SIZE, NULL, 0, 0, F(dl_min_speed), "SIZE",
  "a download slower than this many bytes a second for min_speed_time is stopped (default 1K)" },
{ SBX_K_DL_MIN_SPEED_TIME, NULL, 0, "download", "min_speed_time", SBX_ARG_DURATION, NULL, 0, 0, F(dl_min_speed_ms), "DURATION",
  "how long a download may stay below min_speed (default 30s; none: no speed check)" },
{ SBX_K_PKG_NPM,    NULL, 0, "packages", "npm", SBX_ARG_STRING, NULL, 0, 0, F(pkg_npm), "URL",
  "npm registry the package gateway fetches from (default: the image's)" },
{ SBX_K_PKG_PYPI,   NULL, 0, "packages", "pypi", SBX_ARG_STRING, NULL, 0, 0, F(pkg_pypi), "URL",
  "PyPI simple index the package gateway fetches from (default: the image's pip index)" },
{ SBX_K_PKG_GO,     NULL, 0, "packages", "go", SBX_ARG_STRING, NULL, 0, 0, F(pkg_go), "URL|@go",
  "Go module proxy the package gateway fetches from (needs go_sumdb; @go: the image's own, its go_sumdb too)" },
{ SBX_K_PKG_MAVEN,  NULL, 0, "packages", "maven", SBX_ARG_STRING, NULL, 0, 0, F(pkg_maven), "URL|@maven",
  "Maven repository (Maven Central's layout) the package gateway fetches from (@maven: the image's own)" },
{ SBX_K_PKG_GO_SUMDB, NULL, 0, "packages", "go_sumdb", SBX_ARG_STRING, NULL, 0, 0, F(pkg_go_sumdb), "KEY URL",
  "Go checksum database every module is verified against: its verifier key NAME+HASH+KEY and its URL" },
{ SBX_K_PKG_CARGO,  NULL, 0, "packages", "cargo", SBX_ARG_STRING, NULL, 0, 0, F(pkg_cargo), "URL [DL-URL]|@cargo",
  "Cargo sparse registry (its index URL) the package gateway fetches from, and where its config.json sends downloads when that is another host (@cargo: the image's own)" },
{ SBX_K_PKG_TIMEOUT, NULL, 0, "packages", "timeout", SBX_ARG_DURATION, NULL, 0, 0, F(pkg_timeout_ms), "DURATION",
  "the package gateway gives up on an upstream silent this long (default 30s)" },
{ SBX_K_PKG_ALLOW,  NULL, 0, "packages", "allow", SBX_ARG_PACKAGE, NULL, R, 0, F(pkg_allow), "[ECO:]GLOB",
  "the gateway serves only these packages (ECO: npm, pypi, deb, go, cargo or maven; none given: all)" },
{ SBX_K_PKG_DENY,   NULL, 0, "packages", "deny", SBX_ARG_PACKAGE, NULL, R, 0, F(pkg_deny), "[ECO:]GLOB",
  "the gateway never serves these packages (before allow)" },
{ SBX_K_PKG_MIN_AGE, NULL, 0, "packages", "min_age", SBX_ARG_PACKAGE, NULL, R, 0, F(pkg_min_age), "[ECO:]DURATION",
  "hide versions published less than this long ago (e.g. 7d), or none; ECO:DURATION for one ecosystem (deb:0, npm:3d), which wins over the one for all" },
{ SBX_K_PKG_OFFLINE, NULL, 0, "packages", "offline", SBX_ARG_ENUM, sbx_yesno_names, 0, 0, F(pkg_offline), "yes|no",
  "serve only what the gateway's cache holds; never ask upstream" },
{ SBX_K_PKG_NOT_AFTER, NULL, 0, "packages", "not_after", SBX_ARG_PACKAGE, NULL, R, 0, F(pkg_not_after), "[ECO:]DATE",
  "serve every ecosystem as it was on DATE (YYYY-MM-DD, from 00:00 UTC, or YYYY-MM-DDTHH:MM:SSZ): later versions, and versions without a date, are hidden; ECO:DATE or ECO:none for one ecosystem (deb:none), which wins over the one for all" },
{ SBX_K_PKG_MALICIOUS, NULL, 0, "packages", "malicious", SBX_ARG_STRING, NULL, R, 0, F(pkg_malicious), "FILE|DIR|URL",
  "a malicious-package feed in OSV JSON (a file, a directory of them such as the OpenSSF malicious-packages osv/ tree, or a URL the gateway fetches as it starts, serving nothing until it has): the packages and versions it names are refused" },
{ SBX_K_PKG_MODE, NULL, 0, "packages", "mode", SBX_ARG_ENUM, sbx_pkg_mode_names, 0, 0, F(pkg_mode), "enforce|report",
  "enforce: the rules (allow, deny, min_age, not_after, malicious) refuse; report: what they would refuse is served and told (a package-refused event with \"decision\": \"report\", a line on stderr), for rolling rules out; offline and digest checks always refuse" },
{ SBX_K_PKG_INDEX_MAX_AGE, NULL, 0, "packages", "index_max_age", SBX_ARG_DURATION, NULL, 0, 0, F(pkg_index_max_age_ms), "DURATION",
  "an index document (packument, PyPI page, apt's Release and Packages) is served from the cache this long before upstream is asked again (default 2m; none: ask every time)" },
{ SBX_K_PKG_INDEX_MAX_STALE, NULL, 0, "packages", "index_max_stale", SBX_ARG_DURATION, NULL, 0, 0, F(pkg_index_max_stale_ms), "DURATION",
  "past index_max_age, a packument or PyPI page this much older is still served at once while upstream is asked in the background (default 1d; none: wait for upstream)" },
{ SBX_K_PKG_CACHE_MAX, "cache-max", 0, "packages", "cache_max", SBX_ARG_SIZE, NULL, 0, PX, F(pkg_cache_max), "SIZE",
  "size cap of the user's package cache, index documents included; the least recently used go first (default 10G), or unlimited" },
{ SBX_K_PKG_CACHE, NULL, 0, "packages", "cache", SBX_ARG_STRING, NULL, 0, 0, F(pkg_cache), "DIR",
  "the system package cache root fills and users read first (default /var/cache/sbxrun/packages), or none" },
{ SBX_K_BIND,       "bind",     0,   "mounts", "bind", SBX_ARG_BIND, NULL, R, SB, F(binds), "SRC:DST[:rw]",
  "bind a host path (read-only unless :rw)" },
{ SBX_K_PROJECT,    "project",  0,   NULL, NULL, SBX_ARG_STRING, NULL, 0, SBX_CMD_RUN | SBX_CMD_SHELL | SBX_CMD_SESSION_START | SBX_CMD_MCP, F(project), "DIR",
  "host DIR at the workspace, writable, under an overlay: DIR is never written; what changed is kept as a change set" },
{ SBX_K_APPLY,      "apply",    0,   NULL, NULL, SBX_ARG_NONE, NULL, 0, SBX_CMD_RUN | SBX_CMD_SHELL, F(project_apply), NULL,
  "with --project: apply the change set to DIR at once when the command ends" },
{ SBX_K_APPLY_EXACT_MODES, "exact-modes", 0, NULL, NULL, SBX_ARG_NONE, NULL, 0, SBX_CMD_RUN | SBX_CMD_SHELL, F(project_exact_modes), NULL,
  "with --apply: the sandbox's permission bits (not git's 0644 or 0755 and the umask), still no setuid, setgid or sticky bit" },
{ SBX_K_DISCARD,    "discard",  0,   NULL, NULL, SBX_ARG_NONE, NULL, 0, SBX_CMD_RUN | SBX_CMD_SHELL, F(project_discard), NULL,
  "with --project: throw the change set away when the command ends" },
{ SBX_K_CHANGES_MAX, NULL, 0, "limits", "changes_max", SBX_ARG_SIZE, NULL, 0, 0, F(changes_max), "SIZE",
  "size cap of the user's kept change sets and snapshots; a run or snapshot past it is refused (default 4G), or unlimited" },
{ SBX_K_FORCE_REST, "force-rest", 0, NULL, NULL, SBX_ARG_NONE, NULL, L, SBX_CMD_CHANGES_APPLY, 0, NULL,
  "apply what does not conflict, and name each conflict left out" },
{ SBX_K_EXACT_MODES, "exact-modes", 0, NULL, NULL, SBX_ARG_NONE, NULL, L, SBX_CMD_CHANGES_APPLY, 0, NULL,
  "the sandbox's permission bits (not git's 0644 or 0755 and the umask), still no setuid, setgid or sticky bit" },
{ SBX_K_CHANGES_OLDER, "older", 0,   NULL, NULL, SBX_ARG_DURATION, NULL, L, SBX_CMD_CHANGES_PRUNE, 0, "DURATION",
  "remove the change sets older than DURATION" },
{ SBX_K_CHANGES_ALL, "all",     0,   NULL, NULL, SBX_ARG_NONE, NULL, L, SBX_CMD_CHANGES_PRUNE, 0, NULL,
  "remove every change set" },
{ SBX_K_SHOW_ALL,   "all",      0,   NULL, NULL, SBX_ARG_NONE, NULL, L, SBX_CMD_CHANGES_SHOW, 0, NULL,
  "list every entry: none folded into its directory's line by the project's .gitignore" },
{ SBX_K_PATCH,      "patch",    0,   NULL, NULL, SBX_ARG_STRING, NULL, L, SBX_CMD_CHANGES_EXPORT, 0, "FILE",
  "write the change set to FILE as a patch that git apply takes (binary files, modes, symlinks, deletions)" },
{ SBX_K_COPY,       "copy",     0,   NULL, NULL, SBX_ARG_COPY, NULL, R, SBX_CMD_RUN | SBX_CMD_SHELL, F(copies), "PATH[:DEST]",
  "copy a host file or directory into the workspace first (DEST: relative to it)" },
{ SBX_K_OUT,        "out",      0,   NULL, NULL, SBX_ARG_STRING, NULL, 0, SBX_CMD_RUN | SBX_CMD_SHELL, F(out_dir), "DIR",
  "afterwards, copy the workspace to host DIR (new or empty)" },
{ SBX_K_TTY,        "tty",      't', NULL, NULL, SBX_ARG_NONE, NULL, 0, SBX_CMD_RUN, F(tty), NULL,
  "give the command a terminal" },
{ SBX_K_RAW_TTY,    "raw-tty",  0,   NULL, NULL, SBX_ARG_NONE, NULL, 0, SBX_CMD_RUN | SBX_CMD_SHELL, F(raw_tty), NULL,
  "pass every escape sequence to the terminal (clipboard, queries); no output filter" },
{ SBX_K_JSON,       "json",     0,   NULL, NULL, SBX_ARG_STRING, NULL, 0, SBX_CMD_RUN | SBX_CMD_SHELL, F(json_file), "FILE",
  "write a one-line result record to FILE" },
{ SBX_K_JSON_FD,    "json-fd",  0,   NULL, NULL, SBX_ARG_FD, NULL, 0, SBX_CMD_RUN | SBX_CMD_SHELL, F(json_fd), "N",
  "write the result record to fd N" },
{ SBX_K_EVENTS,     "events",   0,   NULL, NULL, SBX_ARG_STRING, NULL, 0, SB | PX, F(events_file), "FILE",
  "write events (JSON lines) to FILE" },
{ SBX_K_SESSION,    "session",  0,   NULL, NULL, SBX_ARG_NAME, NULL, 0, SBX_CMD_RUN | SBX_CMD_SHELL | SBX_CMD_DOWNLOAD | SBX_CMD_MCP, F(session), "NAME",
  "run in the live session NAME" },
{ SBX_K_FROM,       "from",     0,   NULL, NULL, SBX_ARG_NAME, NULL, 0, SBX_CMD_SESSION_START, F(from), "SNAP",
  "start from the snapshot SNAP (a fork: its layer goes above the image, nothing is copied)" },
{ SBX_K_SHA256,     "sha256",   0,   NULL, NULL, SBX_ARG_STRING, NULL, 0, SBX_CMD_DOWNLOAD, F(sha256), "HEX",
  "verify the download's SHA-256 digest" },
{ SBX_K_HELP,       "help",     'h', NULL, NULL, SBX_ARG_NONE, NULL, L, SBX_CMD_ALL, 0, NULL,
  "show this help" },
{ SBX_K_VERBOSE,    "verbose",  'v', NULL, NULL, SBX_ARG_NONE, NULL, L, SBX_CMD_ALL, 0, NULL,
  "say more on stderr: what was chosen and why" },
{ SBX_K_TRACE,      "trace",    0,   NULL, NULL, SBX_ARG_NONE, NULL, L, SBX_CMD_ALL, 0, NULL,
  "also a time-stamped line per start-up step (-v -v before)" },
{ SBX_K_QUIET,      "quiet",    'q', NULL, NULL, SBX_ARG_NONE, NULL, L, SBX_CMD_ALL, 0, NULL,
  "say only errors" },
{ SBX_K_VERSION,    "version",  0,   NULL, NULL, SBX_ARG_NONE, NULL, L, SBX_CMD_MAIN, 0, NULL,
  "print the version" },
{ SBX_K_NAME,       "name",     'n', NULL, NULL, SBX_ARG_NAME, NULL, L, SBX_CMD_IMAGE_BUILD | SBX_CMD_IMAGE_IMPORT, 0, "NAME",
  "store the image under NAME (default: the recipe's name, with -SUITE for another suite than bookworm; or one taken from the file)" },
{ SBX_K_SUITE,      "suite",    0,   NULL, NULL, SBX_ARG_STRING, NULL, L, SBX_CMD_IMAGE_BUILD, 0, "SUITE",
  "the Debian release the recipe builds: bookworm (Debian 12, the default) or trixie (Debian 13)" },
{ SBX_K_FORCE,      "force",    'f', NULL, NULL, SBX_ARG_NONE, NULL, L, SBX_CMD_SESSION_RM, 0, NULL,
  "stop the session first if it is running" },
{ SBX_K_EXPORT_OUTPUT, "output", 'o', NULL, NULL, SBX_ARG_STRING, NULL, L, IX, 0, "FILE",
  "the file to write (.tar, .tar.gz, .tar.xz or .tar.zst; temporary name, then renamed); required" },
{ SBX_K_EXPORT_WORKSPACE, "workspace", 0, NULL, NULL, SBX_ARG_NONE, NULL, L, IX, 0, NULL,
  "only a running session's workspace (--format tar)" },
{ SBX_K_EXPORT_SNAPSHOT, "snapshot", 0, NULL, NULL, SBX_ARG_NONE, NULL, L, IX, 0, NULL,
  "the operand is a session snapshot: its whole file system (image, layers, workspace) as an image" },
{ SBX_K_MTIME,      "mtime",    0,   NULL, NULL, SBX_ARG_COUNT, NULL, L, IX, 0, "SECONDS",
  "every entry's modification time, for reproducible output" },
{ SBX_K_EXPORT_FORMAT, "format", 0,  NULL, NULL, SBX_ARG_ENUM, export_formats, L, IX, 0, "FORMAT",
  "tar, oci (an OCI image layout) or docker (a docker-archive); podman load and skopeo take both" },
{ SBX_K_MAX_SIZE,   "max-size", 0,   NULL, NULL, SBX_ARG_SIZE, NULL, L, IX | SBX_CMD_CP, 0, "SIZE",
  "write at most SIZE bytes of file data, sparse files staying sparse (default: a session's disk quota plus its image, or twice an image's size)" },
{ SBX_K_CACHE_SYSTEM, "system", 0, NULL, NULL, SBX_ARG_NONE, NULL, L, SBX_CMD_CACHE | SBX_CMD_IMAGE_BUILD | SBX_CMD_IMAGE_IMPORT, 0, NULL,
  "the system package cache or image store instead of the user's (root only, but to read the cache)" },
{ SBX_K_CACHE_MAX,  "max",      0,   NULL, NULL, SBX_ARG_SIZE, NULL, L, SBX_CMD_CACHE_PRUNE, 0, "SIZE",
  "evict the least recently used until the cache holds at most SIZE" },
{ SBX_K_CACHE_ALL,  "all",      0,   NULL, NULL, SBX_ARG_NONE, NULL, L, SBX_CMD_CACHE_PRUNE, 0, NULL,
  "evict everything, index documents included" },
{ SBX_K_CACHE_OLDER, "older",   0,   NULL, NULL, SBX_ARG_DURATION, NULL, L, SBX_CMD_CACHE_PRUNE, 0, "DURATION",
  "evict what was not used for DURATION" },
{ SBX_K_LISTEN,     "listen",   0,   NULL, NULL, SBX_ARG_STRING, NULL, 0, PX, F(listen), "ADDR:PORT",
  "TCP address the proxy serves (127.0.0.1:3128, [::1]:3128, 0.0.0.0:3128)" },
{ SBX_K_AUTH_FILE,  "auth-file", 0,  NULL, NULL, SBX_ARG_STRING, NULL, 0, PX, F(auth_file), "FILE",
  "require Proxy-Authorization: FILE holds USER:PASSWORD, or a password alone (or set SBXRUN_PROXY_AUTH)" },
{ SBX_K_HEADER_TIMEOUT, "header-timeout", 0, NULL, NULL, SBX_ARG_DURATION, NULL, 0, PX, F(header_timeout_ms), "DURATION",
  "time a client has to send its request head (default 10s)" },
{ SBX_K_UNREAD_MAX, "unread-max", 0, NULL, NULL, SBX_ARG_SIZE, NULL, 0, PX, F(unread_max), "SIZE",
  "disk the gateway's answers not yet read may hold (default 1G; each address at most an eighth)" },
{ SBX_K_ANSWER_TIMEOUT, "answer-timeout", 0, NULL, NULL, SBX_ARG_DURATION, NULL, 0, PX, F(answer_timeout_ms), "DURATION",
  "time a client has to read a gateway answer, from its first byte (default 11m, and 1s per MiB)" },
{ SBX_K_NET_FOR,    "for",      0,   NULL, NULL, SBX_ARG_ENUM, net_for, L, SBX_CMD_NET_ALLOW, 0, "WHEN",
  "once (the next connection), session (default: until it ends) or always (also written into the session's profile, with a comment)" },
{ SBX_K_LS_JSON,    "json",     0,   NULL, NULL, SBX_ARG_NONE, NULL, L, SBX_CMD_SESSION_LS, 0, NULL,
  "one JSON object per session, with the network rules a running one holds now" },
{ SBX_K_FORMAT,     "format",   0,   NULL, NULL, SBX_ARG_ENUM, sbx_export_format_names, 0, PE, F(export_format), "FORMAT",
  "kube (Kubernetes YAML) or seccomp (OCI seccomp JSON)" },
{ SBX_K_KIND,       "kind",     0,   NULL, NULL, SBX_ARG_ENUM, sbx_kube_kind_names, 0, PE, F(kube_kind), "KIND",
  "Kubernetes object: job (batch/v1) or pod" },
{ SBX_K_IMAGE_REF,  "image-ref", 0,  NULL, NULL, SBX_ARG_STRING, NULL, 0, PE, F(image_ref), "REF",
  "image reference the pod runs (default localhost/IMAGE:latest)" },
{ SBX_K_OUTPUT,     "output",   'o', NULL, NULL, SBX_ARG_STRING, NULL, 0, PE, F(output), "FILE",
  "write to FILE (temporary name, then renamed) instead of stdout" },
};
/* clang-format on */

const size_t sbx_options_count = sizeof(sbx_options) / sizeof(sbx_options[0]);

/* clang-format off */
const struct sbx_command sbx_commands[] = {
{ NULL, "run", SBX_CMD_RUN, "[OPTIONS] [--] CMD [ARG...]", "run one command in a fresh sandbox" },
{ NULL, "shell", SBX_CMD_SHELL, "[OPTIONS]", "interactive login shell in a fresh sandbox" },
{ NULL, "session", 0, "COMMAND [OPTIONS] [NAME]", "long-lived sandboxes that several commands share" },
{ "session", "start", SBX_CMD_SESSION_START, "[OPTIONS] NAME", "start the session NAME in the background" },
{ "session", "ls", SBX_CMD_SESSION_LS, "", "list sessions: image, profile, age, memory in use, state" },
{ "session", "stop", SBX_CMD_SESSION_STOP, "NAME", "stop a running session" },
{ "session", "rm", SBX_CMD_SESSION_RM, "[-f] NAME", "remove what a stopped session left (-f: a running one too)" },
{ "session", "snapshot", SBX_CMD_SESSION_SNAPSHOT, "NAME [SNAP]", "keep the session's file system as the snapshot SNAP (default NAME-1, NAME-2, ...)" },
{ "session", "snapshots", SBX_CMD_SESSION_SNAPSHOTS, "", "list snapshots: name, session, image, size, age" },
{ "session", "snapshot-rm", SBX_CMD_SESSION_SNAPSHOT_RM, "SNAP", "remove a snapshot" },
{ "session", "restore", SBX_CMD_SESSION_RESTORE, "NAME SNAP", "roll the session NAME back to the snapshot SNAP (its processes end; it starts again from SNAP)" },
{ NULL, "net", 0, "COMMAND [OPTIONS] SESSION HOST[:PORT]", "change a running session's network rules: allow, deny" },
{ "net", "allow", SBX_CMD_NET_ALLOW, "[--for once|session|always] SESSION HOST[:PORT]", "let the session reach HOST (never past a deny, an address class sbxrun never reaches or the policy)" },
{ "net", "pending", SBX_CMD_NET_PENDING, "[SESSION]", "list the connections held for an answer (profile key [network] ask): session, host:port, seconds waited" },
{ "net", "deny", SBX_CMD_NET_DENY, "SESSION HOST[:PORT]", "refuse HOST (every port without one) from now on, and cut its open connections" },
{ NULL, "download", SBX_CMD_DOWNLOAD, "[OPTIONS] URL DEST|SESSION:DEST", "fetch a URL on the host side into a session's workspace" },
{ NULL, "cp", SBX_CMD_CP, "[OPTIONS] SESSION:PATH HOSTPATH | HOSTPATH SESSION:PATH", "copy files between the host and a session (SESSION:PATH)" },
{ NULL, "image", 0, "COMMAND [OPTIONS] [ARG]", "build, import, list, inspect, export and remove rootfs images" },
{ "image", "build", SBX_CMD_IMAGE_BUILD, "[OPTIONS] [minimal|full]", "build an image from a stock recipe with mmdebstrap" },
{ "image", "import", SBX_CMD_IMAGE_IMPORT, "[OPTIONS] FILE", "import a rootfs, an OCI layout or a docker-archive (.tar, .tar.gz, .tar.xz, .tar.zst)" },
{ "image", "ls", SBX_CMD_IMAGE_LS, "", "list the images of the user's and the system's store" },
{ "image", "rm", SBX_CMD_IMAGE_RM, "NAME", "remove an image" },
{ "image", "inspect", SBX_CMD_IMAGE_INSPECT, "NAME", "show an image's digest, size, source, package hosts and environment" },
{ "image", "export", SBX_CMD_IMAGE_EXPORT, "[OPTIONS] SESSION|IMAGE|--snapshot SNAP -o FILE", "write a live session's filesystem (or only its workspace) or an image as a tarball" },
{ NULL, "profile", 0, "COMMAND [OPTIONS] [NAME]", "list profiles, show one fully resolved, export one" },
{ "profile", "ls", SBX_CMD_PROFILE_LS, "", "list the profiles and where each is found" },
{ "profile", "show", SBX_CMD_PROFILE_SHOW, "NAME", "show a profile fully resolved, each value with its origin" },
{ "profile", "export", SBX_CMD_PROFILE_EXPORT, "[OPTIONS] NAME", "write a profile as Kubernetes YAML or as an OCI seccomp profile" },
{ NULL, "mcp", SBX_CMD_MCP, "[OPTIONS]", "MCP server on stdin/stdout: an AI agent's tools in one sandbox" },
{ NULL, "proxy", SBX_CMD_PROXY, "--listen ADDR:PORT [OPTIONS]", "a profile's egress proxy and package gateway on a TCP address (a pod's sidecar)" },
{ NULL, "doctor", SBX_CMD_DOCTOR, "", "which kernel features this machine offers and what falls back" },
{ NULL, "cache", 0, "COMMAND [OPTIONS] [ARG]", "the package gateway's cache: list, total, prune, fill ahead" },
{ "cache", "ls", SBX_CMD_CACHE_LS, "[--system]", "list the cached artifacts and index documents: ecosystem, name, version, size, last use, digest or upstream" },
{ "cache", "du", SBX_CMD_CACHE_DU, "[--system]", "the cache's size per ecosystem (artifacts, index documents) and in all" },
{ "cache", "prune", SBX_CMD_CACHE_PRUNE, "[--max SIZE | --older DURATION | --all] [--system]", "evict from the cache, the least recently used first (no option: down to [packages] cache_max)" },
{ "cache", "fill", SBX_CMD_CACHE_FILL, "[OPTIONS] FILE", "fill the cache ahead from a package-lock.json, a requirements.txt or an apt package list, through the gateway in a sandbox" },
{ NULL, "changes", 0, "COMMAND [OPTIONS] [ID]", "change sets of run --project: list, show, diff, apply, discard, prune" },
{ "changes", "ls", SBX_CMD_CHANGES_LS, "", "list the kept change sets: id, project, age, counts, size" },
{ "changes", "show", SBX_CMD_CHANGES_SHOW, "[--all] ID", "list what a change set changes: kind, type, the mode apply gives, size, path, verdict; deletions first" },
{ "changes", "diff", SBX_CMD_CHANGES_DIFF, "ID [PATH...]", "git's diff of a change set against the project: modes, symlinks, deletions first (a line for a binary file)" },
{ "changes", "export", SBX_CMD_CHANGES_EXPORT, "--patch FILE ID [PATH...]", "write a change set as a patch for git apply, binary files included" },
{ "changes", "apply", SBX_CMD_CHANGES_APPLY, "[--force-rest] [--exact-modes] ID [PATH...]", "write a change set into its project, refused whole on a conflict" },
{ "changes", "discard", SBX_CMD_CHANGES_DISCARD, "ID", "throw a change set away" },
{ "changes", "prune", SBX_CMD_CHANGES_PRUNE, "[--older DURATION | --all]", "remove old change sets (no option: the oldest, down to [limits] changes_max)" },
};
/* clang-format on */

const size_t sbx_commands_count = sizeof(sbx_commands) / sizeof(sbx_commands[0]);

const struct sbx_command *options_command(sbx_cmds mask)
{
	for (size_t i = 0; i < sbx_commands_count; i++)
		if (sbx_commands[i].mask == mask)
			return &sbx_commands[i];
	return NULL;
}

const struct sbx_command *options_command_named(const char *group, const char *name)
{
	for (size_t i = 0; i < sbx_commands_count; i++) {
		const struct sbx_command *c = &sbx_commands[i];
		if (!strcmp(c->name, name) && (group ? c->group && !strcmp(c->group, group) : !c->group))
			return c;
	}
	return NULL;
}

const struct sbx_option *options_by_key(enum sbx_key key)
{
	for (size_t i = 0; i < sbx_options_count; i++)
		if (sbx_options[i].key == key)
			return &sbx_options[i];
	return NULL;
}

const struct sbx_option *options_by_profile_key(const char *section, const char *key)
{
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		if (o->section && strcmp(o->section, section) == 0 && strcmp(o->pkey, key) == 0)
			return o;
	}
	return NULL;
}

int options_section_known(const char *section)
{
	for (size_t i = 0; i < sbx_options_count; i++)
		if (sbx_options[i].section && strcmp(sbx_options[i].section, section) == 0)
			return 1;
	return 0;
}
