/* config.h - the one configuration a sandbox is built from: built-in
 * defaults, then the profile chain, then the command line; checked once and
 * passed down as const. */
#ifndef SBX_CONFIG_H
#define SBX_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "base/options.h"

enum sbx_storage { SBX_STORAGE_TMPFS, SBX_STORAGE_DISK };
enum sbx_onoff { SBX_OFF, SBX_ON };
enum sbx_enforce { SBX_ENFORCE_BEST, SBX_ENFORCE_STRICT };
enum sbx_egress { SBX_EGRESS_NONE, SBX_EGRESS_PACKAGES, SBX_EGRESS_FULL };
enum sbx_ca { SBX_CA_HOST, SBX_CA_IMAGE };
enum sbx_proxy_env { SBX_PROXY_ENV_TOOLS, SBX_PROXY_ENV_ALL };
/* How much of a sandbox this machine lets sbxrun make, weakest first
 * (landlock: no user namespace at all, sandbox/landlock.h): [sandbox] tier
 * names the lowest a profile accepts, the policy can raise it, and a run
 * records the one it got (sandbox/tier.h). */
enum sbx_tier { SBX_TIER_LANDLOCK, SBX_TIER_NESTED, SBX_TIER_FULL };

extern const char *const sbx_storage_names[];
extern const char *const sbx_seccomp_names[];
extern const char *const sbx_yesno_names[];
extern const char *const sbx_pkg_mode_names[];  /* [packages] mode: report, enforce (enum sbx_pkg_mode) */
enum sbx_pkg_mode { SBX_PKG_REPORT, SBX_PKG_ENFORCE };
extern const char *const sbx_enforce_names[];
extern const char *const sbx_egress_names[];
extern const char *const sbx_ca_names[];
extern const char *const sbx_proxy_env_names[];
extern const char *const sbx_tier_names[];
extern const char *const sbx_export_format_names[];
extern const char *const sbx_kube_kind_names[];
/* The host sets an allow list may name, read from the image (its package
 * sources), in the order `packages` egress allows them when a sandbox's
 * list is empty (net/netplan.c); NULL-terminated. */
enum sbx_host_set { SBX_SET_APT, SBX_SET_PYPI, SBX_SET_NPM, SBX_SET_GO, SBX_SET_CARGO, SBX_SET_MAVEN,
		    SBX_SET__COUNT };
extern const char *const sbx_host_sets[];
enum sbx_export_format { SBX_EXPORT_KUBE, SBX_EXPORT_SECCOMP };
enum sbx_kube_kind { SBX_KUBE_JOB, SBX_KUBE_POD };

/* A repeatable value: the items in order, with where each came from. */
struct sbx_strlist {
	char **v;
	char **origin;
	size_t n;
};

struct sbx_bind {
	char *src;   /* absolute host path */
	char *dst;   /* absolute path inside */
	int rw;
};

struct sbx_config {
	/* [sandbox] */
	char *profile;
	char *inherit; /* only while loading; the resolved chain is in origins */
	char *image;
	char *user;
	char *hostname;
	char *workdir;
	struct sbx_strlist env;
	char *workspace;
	int storage;
	int seccomp;
	int ptrace;
	/* [limits] */
	uint64_t timeout_ms;
	uint64_t memory;
	uint64_t disk;
	uint64_t pids;
	uint64_t cpus_milli;
	uint64_t file_size;
	uint64_t open_files;
	uint64_t idle_ms;
	uint64_t lifetime_ms;
	uint64_t changes_max;      /* the user's change sets' cap; 0: unlimited */
	int enforce;
	int tier;          /* enum sbx_tier: the lowest accepted */
	/* [network] */
	int egress;
	struct sbx_strlist allow;
	int ca;
	int proxy_env;
	int net_ask;               /* hold and ask (a session's proxy) */
	uint64_t ask_timeout_ms;
	/* [credentials]: "VAR=SOURCE HOST..." lines (base/credspec.h) */
	struct sbx_strlist creds;
	/* [download] */
	struct sbx_strlist dl_allow;
	uint64_t dl_max_size;
	uint64_t dl_timeout_ms;    /* 0: none */
	uint64_t dl_min_speed;     /* bytes a second */
	uint64_t dl_min_speed_ms;  /* 0: no speed check */
	/* [packages]: the package gateway (src/gateway/) */
	char *pkg_npm;             /* npm upstream URL; NULL: the image's */
	char *pkg_pypi;            /* PyPI simple index URL; NULL: the image's */
	char *pkg_go;              /* Go module proxy URL; NULL: none */
	char *pkg_go_sumdb;        /* "NAME+HASH+KEY URL": Go's checksum database */
	char *pkg_cargo;           /* "INDEX-URL [DOWNLOAD-URL]": Cargo's sparse registry; NULL: none */
	char *pkg_maven;           /* Maven repository URL; NULL: none */
	uint64_t pkg_timeout_ms;   /* an upstream silent this long fails */
	struct sbx_strlist pkg_allow;  /* [ECO:]GLOB: only these (empty: all) */
	struct sbx_strlist pkg_deny;   /* [ECO:]GLOB: never these */
	struct sbx_strlist pkg_min_age;  /* "[ECO:]DURATION": versions younger are hidden (pkgrule_age_for) */
	uint64_t pkg_index_max_age_ms;  /* an index served from the cache this long unasked; 0: never */
	uint64_t pkg_index_max_stale_ms; /* then this much longer while revalidated behind; 0: never */
	int pkg_offline;           /* enum sbx_onoff: only what the cache holds */
	int pkg_mode;              /* enum sbx_pkg_mode: report serves what the rules would refuse */
	struct sbx_strlist pkg_not_after; /* "[ECO:]DATE": versions published later are hidden (pkgrule_not_after_for) */
	struct sbx_strlist pkg_malicious; /* OSV feeds (files, directories) whose packages are refused */
	uint64_t pkg_cache_max;    /* the user's cache's cap in bytes; 0: unlimited */
	char *pkg_cache;           /* the system cache's directory; "none": no system cache */
	/* [mounts] */
	struct sbx_strlist binds;
	/* command line only */
	struct sbx_strlist copies; /* --copy PATH[:DEST], as given */
	char *out_dir;             /* --out DIR */
	char *project;             /* --project DIR, as given */
	int project_apply;         /* --apply */
	int project_discard;       /* --discard */
	int project_exact_modes;   /* --exact-modes (with --apply) */
	int tty;
	int raw_tty;
	char *json_file;
	uint64_t json_fd; /* 0: none (stdin is never a record target) */
	char *events_file;
	char *session;
	char *from;          /* session start --from SNAP */
	/* set by session start --from, not an option: the snapshot's layers on
	 * the host, top first, which the image's rootfs goes under */
	struct sbx_strlist snap_layers;
	/* set by run and session start for --project, not options: the change
	 * set the sandbox writes over DIR (undo/project.h) */
	struct sbx_project_set {
		char *id;
		char *path;    /* DIR, absolute */
		char *layer;   /* the change set's directory: upper/ and work/ */
		uint64_t dev, ino; /* DIR's, checked again when the sandbox opens it */
	} project_set;
	char *sha256;
	char *listen;        /* sbxrun proxy */
	char *auth_file;
	uint64_t header_timeout_ms;
	uint64_t unread_max;        /* 0: the gateway's default (gw.h GW_HELD_MAX) */
	uint64_t answer_timeout_ms; /* 0: the gateway's default (gw.h GW_ANSWER_MS) */
	int export_format;   /* sbxrun profile export */
	int kube_kind;
	char *image_ref;
	char *output;
	/* where each value came from: "default", "FILE:LINE", "command line" */
	char *origin[SBX_K__COUNT];
	/* set by config_check from the two above */
	int ca_set_explicitly;
};

void config_init(struct sbx_config *cfg);
void config_free(struct sbx_config *cfg);
/* Parses value for opt and stores it; the origin is copied. On the command
 * line (cli != 0) `--env NAME` takes the caller's value. */
int config_set(struct sbx_config *cfg, const struct sbx_option *opt, const char *value,
	       const char *origin, int cli, struct sbx_err *err);
/* The word that lifts a limit of this kind ("none" for a duration,
 * "unlimited" otherwise), NULL if the option is not a limit. */
const char *config_unlimited_word(const struct sbx_option *opt);
/* Option combinations and values that depend on each other; after loading. */
/* A repeatable value's list: add takes value and copies origin; free
 * empties the list. */
void config_strlist_add(struct sbx_strlist *l, char *value, const char *origin);
void config_strlist_free(struct sbx_strlist *l);
int config_check(const struct sbx_config *cfg, struct sbx_err *err);
/* The value formatted as a profile would write it (lists: one per call). */
void config_format(const struct sbx_config *cfg, const struct sbx_option *opt,
		   char *buf, size_t size);
const struct sbx_strlist *config_list(const struct sbx_config *cfg, const struct sbx_option *opt);

int bind_parse(const char *spec, struct sbx_bind *out, struct sbx_err *err);
void bind_free(struct sbx_bind *b);
/* Reads an allow list's entry once, into the canonical text every host
 * comparison reads (base/hostentry.h): HOST, *.DOMAIN, HOST:PORT,
 * [v6]:PORT lowercased, without a trailing dot, or a set (@apt). */
int host_pattern_read(const char *s, char **out, struct sbx_err *err);
/* enum sbx_host_set of "@apt", "@pypi" or "@npm", else -1. */
int host_set_index(const char *s);

#include "base/upstream.h"

#endif
