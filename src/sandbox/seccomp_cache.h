/* seccomp_cache.h - the compiled seccomp filter, cached per user. */
#ifndef SBX_SECCOMP_CACHE_H
#define SBX_SECCOMP_CACHE_H

#include "base/config.h"
#include "base/err.h"
#include "sandbox/seccomp.h"

/* Fills out with the filter of cfg (empty when seccomp = off): from the
 * caller's cache when a verified entry for exactly these inputs exists,
 * else compiled with libseccomp and written to the cache (best effort).
 * Free with seccomp_bpf_free. */
int seccomp_prepare(const struct sbx_config *cfg, int single_uid, struct sbx_bpf *out, struct sbx_err *err);

#endif
