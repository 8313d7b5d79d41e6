/* store.h - the image store: images keyed by digest, names mapped to them,
 * the user's store read-write and the system store read-only. */
#ifndef SBX_STORE_H
#define SBX_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "base/err.h"
#include "store/digest.h"

/* An image in use by a sandbox (store_image_open .. store_image_close). */
struct sbx_image {
	char *name;
	char *digest;
	char *dir;           /* the image's directory (holds rootfs/ and meta.json) */
	int rootfs_fd;       /* O_PATH|O_DIRECTORY of rootfs */
	int use_lock_fd;     /* shared flock on its STORE_IMAGE_LOCK while in use */
	char **env;          /* KEY=VALUE from the image's /etc/environment */
	char **apt_hosts;    /* hosts of the image's apt sources */
	char *npm_registry;  /* filled by the egress work; "" until then */
	char *pypi_index;
	char *go_proxy;      /* the image's go: GOPROXY's first URL */
	char *go_sumdb;      /* "NAME+HASH+KEY URL" of its GOSUMDB, "" if unknown */
	char *cargo_index;   /* cargo's registry: "INDEX-URL" (sparse+https://...) */
	char *maven_repo;    /* Maven's mirror or its super POM's repository URL */
	uint64_t size;
};

/* Finds NAME in the user's store, then the system store, and takes a shared
 * use-lock so that `image rm` is refused until store_image_close. A user
 * other than root gets a system image as the copy in their own store that
 * import_image_open made at its first use. */
int store_image_open(const char *name, struct sbx_image *img, struct sbx_err *err);
/* Which store NAME is found in first: 0 the user's, 1 the system's (its
 * digest filled), -1 with err when none has it. */
int store_image_where(const char *name, char digest[SBX_DIGEST_HEX + 1], struct sbx_err *err);
void store_image_close(struct sbx_image *img);

/* What meta.json holds. */
struct sbx_meta {
	char *name, *digest, *source, *npm_registry, *pypi_index;
	char *go_proxy, *go_sumdb, *cargo_index, *maven_repo; /* as in struct sbx_image */
	char **env, **apt_hosts;
	/* package sources the image named but may not grant ("SOURCE: why"):
	 * loopback, private, link-local, *.sbxrun.internal (hostaddr.h) */
	char **dropped;
	uint64_t size;
	int64_t created; /* seconds since the epoch */
};
/* store_meta.c: meta.json read and written */
void store_meta_free(struct sbx_meta *m);
/* Writes meta.json into the image directory dirfd (temp name, then rename). */
int store_meta_write(int dirfd, const struct sbx_meta *m, struct sbx_err *err);
int store_meta_read(int dirfd, struct sbx_meta *m, struct sbx_err *err);
/* Writes data to dirfd/name through a temporary name, fsync and a rename;
 * 0644 whatever the umask. */
int store_write_atomic(int dirfd, const char *name, const char *data, size_t len, struct sbx_err *err);

/* The user's store, created if missing, with its change lock held. */
struct sbx_store {
	char *path;
	int fd;        /* the images directory */
	int lock_fd;   /* exclusive flock on .lock */
	int cache_fd;  /* digests/: the digest cache */
	bool system;   /* the system store (root only; readable by all) */
};
int store_open_locked(struct sbx_store *s, struct sbx_err *err);
/* The system store SBX_SYSTEM_STORE, for root: created root's and 0755 all
 * the way down (an image's rootfs is the uid root's sandboxes map to). */
int store_open_system_locked(struct sbx_store *s, struct sbx_err *err);

/* In a system image's directory: the file it was imported from, which a user
 * unpacks into a copy of their own (import_system_copy). */
#define STORE_SYSTEM_ARCHIVE "archive"
/* In a user's copy of a system image: kept, unnamed, while the system store
 * names its digest. */
#define STORE_SYSTEM_COPY "system-copy"
void store_close(struct sbx_store *s);
/* In an image's directory: its use-lock (0600, the store owner's alone;
 * the directory of a system image is open to every user, this file to
 * root alone, so no user's flock stalls root). */
#define STORE_IMAGE_LOCK ".lock"
/* The image directory dirfd's use-lock taken exclusively, without waiting:
 * its fd, or -1 when a sandbox uses the image (or the lock cannot be had). */
int store_image_trylock(int dirfd);

/* A path in the user's store for a recipe build's output (not under the
 * lock: a build takes minutes); leftovers of dead builders are cleaned. */
int store_build_path(const char *recipe, const char *ext, char **out, struct sbx_err *err);

/* Image names: a letter or digit, then letters, digits, '.', '_', '-'; 64 max. */
int store_name_check(const char *name, struct sbx_err *err);
bool store_has_digest(const struct sbx_store *s, const char *digest);
/* A new staging directory ".staging-XXXXXX" in the store (0700); when called
 * as root it belongs to owner_uid (the sandbox's host uid). */
int store_staging_new(const struct sbx_store *s, unsigned owner_uid, char **name, int *fd,
		      struct sbx_err *err);
/* Moves a finished staging directory into place as the image DIGEST. */
int store_staging_commit(const struct sbx_store *s, const char *staging, const char *digest,
			 struct sbx_err *err);
/* The digest NAME points at in s: 1 found, 0 not. */
int store_digest_of(const struct sbx_store *s, const char *name, char digest[SBX_DIGEST_HEX + 1],
		    struct sbx_err *err);
/* Points NAME at DIGEST (names/NAME, written atomically). */
int store_name_set(const struct sbx_store *s, const char *name, const char *digest,
		   struct sbx_err *err);
/* `image rm`: refused while a sandbox holds the image's use-lock. */
int store_remove(const char *name, struct sbx_err *err);

/* Calls fn for each name of the user's store, then of the system store. */
typedef void (*store_list_fn)(const char *name, const struct sbx_meta *m, const char *where,
			      void *arg);
int store_list(store_list_fn fn, void *arg, struct sbx_err *err);
/* The metadata of NAME (first store that has it) for `image inspect`. */
int store_inspect(const char *name, struct sbx_meta *m, const char **where, struct sbx_err *err);

#endif
