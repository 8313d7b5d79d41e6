/* seccomp_export.c - sbxrun's own seccomp filter as an OCI/Docker seccomp
 * profile (JSON), for `podman --security-opt seccomp=FILE` and the
 * kubelet's Localhost profiles. It reads the filter's rule data through
 * seccomp_rules() and writes the same decisions: default allow, the native
 * architecture only, each denied call with its errno, the argument rules
 * (namespace flags, ioctl requests, socket families, personality) as masked
 * comparisons. The personality rule, one BPF AND in the real filter, becomes
 * the aligned blocks that cover every value but the allowed ones. */
#define _GNU_SOURCE
#include "sandbox/seccomp_export.h"

#include <errno.h>
#include <string.h>
#include <sys/utsname.h>

#include "base/util.h"
#include "sandbox/seccomp.h"

static const char *scmp_arch(void)
{
	static const char *const map[][2] = {
		{ "x86_64", "SCMP_ARCH_X86_64" }, { "aarch64", "SCMP_ARCH_AARCH64" },
		{ "ppc64le", "SCMP_ARCH_PPC64LE" }, { "s390x", "SCMP_ARCH_S390X" },
		{ "riscv64", "SCMP_ARCH_RISCV64" },
	};
	struct utsname u;
	if (uname(&u) == 0)
		for (size_t i = 0; i < ARRAY_SIZE(map); i++)
			if (strcmp(u.machine, map[i][0]) == 0)
				return map[i][1];
	return "SCMP_ARCH_X86_64";
}

static struct json_object *arg_cmp(unsigned index, const char *op, uint64_t value, uint64_t two)
{
	struct json_object *a = json_object_new_object();
	json_object_object_add(a, "index", json_object_new_int((int)index));
	json_object_object_add(a, "value", json_object_new_uint64(value));
	json_object_object_add(a, "valueTwo", json_object_new_uint64(two));
	json_object_object_add(a, "op", json_object_new_string(op));
	return a;
}

/* One entry of "syscalls": names, the errno, and at most one comparison. */
static void add_rule(struct json_object *calls, const char *const *names, size_t n, int errnum,
		     struct json_object *cmp)
{
	struct json_object *r = json_object_new_object(), *nv = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(nv, json_object_new_string(names[i]));
	json_object_object_add(r, "names", nv);
	json_object_object_add(r, "action", json_object_new_string("SCMP_ACT_ERRNO"));
	json_object_object_add(r, "errnoRet", json_object_new_int(errnum));
	if (cmp) {
		struct json_object *args = json_object_new_array();
		json_object_array_add(args, cmp);
		json_object_object_add(r, "args", args);
	}
	json_object_array_add(calls, r);
}

/* Every value in [lo, lo + 2^bits) that is not allowed, as aligned blocks
 * (mask, value); the allowed values are few, so the blocks are too. */
static void persona_blocks(struct json_object *calls, uint64_t lo, unsigned bits, uint32_t ok)
{
	static const char *const name[] = { "personality" };
	uint64_t size = 1ULL << bits, hits = 0;

	/* the allowed set is the subsets of `ok` plus 0xffffffff: count them here */
	for (uint64_t sub = ok;; sub = (sub - 1) & ok) {
		hits += sub >= lo && sub - lo < size;
		if (sub == 0)
			break;
	}
	hits += 0xffffffffULL >= lo && 0xffffffffULL - lo < size;
	if (hits == 0) {
		uint64_t mask = ~(size - 1);
		add_rule(calls, name, 1, EPERM, arg_cmp(0, "SCMP_CMP_MASKED_EQ", mask, lo));
		return;
	}
	if (bits == 0)
		return;
	persona_blocks(calls, lo, bits - 1, ok);
	persona_blocks(calls, lo + size / 2, bits - 1, ok);
}

static void namespace_rules(struct json_object *calls, const struct sbx_seccomp_rules *r)
{
	static const char *const both[] = { "clone", "unshare" }, *const unshare[] = { "unshare" };
	for (size_t i = 0; i < r->n_ns_flags; i++)
		add_rule(calls, both, 2, EPERM,
			 arg_cmp(0, "SCMP_CMP_MASKED_EQ", r->ns_flags[i], r->ns_flags[i]));
	add_rule(calls, unshare, 1, EPERM,
		 arg_cmp(0, "SCMP_CMP_MASKED_EQ", r->ns_unshare_only, r->ns_unshare_only));
}

static void deny_rules(struct json_object *calls, const struct sbx_seccomp_rules *r)
{
	/* grouped by errno, in the order the table gives them */
	int seen[8], nseen = 0;
	for (size_t i = 0; i < r->n_deny; i++) {
		int e = r->deny[i].errnum, dup = 0;
		for (int k = 0; k < nseen; k++)
			dup |= seen[k] == e;
		if (dup || nseen == (int)ARRAY_SIZE(seen))
			continue;
		seen[nseen++] = e;
		const char *names[128];
		size_t n = 0;
		for (size_t j = i; j < r->n_deny && n < ARRAY_SIZE(names); j++)
			if (r->deny[j].errnum == e)
				names[n++] = r->deny[j].name;
		add_rule(calls, names, n, e, NULL);
	}
}

struct json_object *seccomp_export_json(const struct sbx_config *cfg)
{
	static const char *const ioctl_name[] = { "ioctl" };
	struct sbx_seccomp_rules r;
	struct json_object *p = json_object_new_object(), *arch = json_object_new_array();
	struct json_object *calls = json_object_new_array();

	seccomp_rules(&r);
	json_object_object_add(p, "defaultAction", json_object_new_string("SCMP_ACT_ALLOW"));
	json_object_array_add(arch, json_object_new_string(scmp_arch()));
	json_object_object_add(p, "architectures", arch);
	json_object_object_add(p, "syscalls", calls);
	if (cfg->seccomp == SBX_OFF)
		return p; /* seccomp = off: nothing denied, as in the sandbox */
	deny_rules(calls, &r);
	namespace_rules(calls, &r);
	for (size_t i = 0; i < r.n_ioctls; i++)
		add_rule(calls, ioctl_name, 1, EPERM,
			 arg_cmp(1, "SCMP_CMP_MASKED_EQ", 0xffffffffULL, r.ioctls[i]));
	add_rule(calls, r.socket_calls, r.n_socket_calls, EAFNOSUPPORT,
		 arg_cmp(0, "SCMP_CMP_GT", r.af_max, 0));
	for (size_t i = 0; i < r.n_af_blocks; i++)
		add_rule(calls, r.socket_calls, r.n_socket_calls, EAFNOSUPPORT,
			 arg_cmp(0, "SCMP_CMP_MASKED_EQ", r.af_blocks[i][0], r.af_blocks[i][1]));
	if (!cfg->ptrace)
		add_rule(calls, r.ptrace_family, r.n_ptrace, EPERM, NULL);
	/* personality: high garbage above 32 bits, then the low 32 bits */
	static const char *const pers[] = { "personality" };
	add_rule(calls, pers, 1, EPERM, arg_cmp(0, "SCMP_CMP_GT", 0xffffffffULL, 0));
	persona_blocks(calls, 0, 32, r.personality_ok_bits);
	return p;
}
