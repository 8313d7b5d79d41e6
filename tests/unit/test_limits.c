/* test_limits.c - the pure parts of limits.c and cgroup.c: parsing
 * /proc/self/cgroup, mountinfo and keyed cgroup files, and the choice of a
 * mechanism per limit from what a machine offers. */
#include <stdint.h>
#include <string.h>

#include "sandbox/cgroup.h"
#include "base/config.h"
#include "sandbox/limits.h"
#include "unit.h"

static void test_parse_self(void)
{
	const char *hybrid = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n"
			     "1:cpu,cpuacct:/x/y\n0::/\n";
	const char *v2 = "0::/user.slice/user-1000.slice/session-2.scope\n";
	char out[256];

	CHECK(cgroup_parse_self(hybrid, "memory", out, sizeof(out)) == 0);
	CHECK_STR(out, "/process_api/abc");
	CHECK(cgroup_parse_self(hybrid, "cpu", out, sizeof(out)) == 0);
	CHECK_STR(out, "/x/y");
	CHECK(cgroup_parse_self(hybrid, "cpuacct", out, sizeof(out)) == 0);
	CHECK(cgroup_parse_self(hybrid, "cpuset", out, sizeof(out)) < 0);
	CHECK(cgroup_parse_self(hybrid, NULL, out, sizeof(out)) == 0);
	CHECK_STR(out, "/");
	CHECK(cgroup_parse_self(v2, NULL, out, sizeof(out)) == 0);
	CHECK_STR(out, "/user.slice/user-1000.slice/session-2.scope");
	CHECK(cgroup_parse_self(v2, "memory", out, sizeof(out)) < 0);
	/* "name=systemd" is not the "systemd" controller, nor is "pids" "pid" */
	CHECK(cgroup_parse_self(hybrid, "pid", out, sizeof(out)) < 0);
}

static void test_parse_mountinfo(void)
{
	const char *mi =
		"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
		"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
		"33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
		"35 31 0:32 /docker/x /sys/fs/cgroup/my\\040memory rw - cgroup cgroup rw,memory\n"
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
	char mnt[256], root[256];

	CHECK(cgroup_parse_mountinfo(mi, "cpu", mnt, root, sizeof(mnt)) == 0);
	CHECK_STR(mnt, "/sys/fs/cgroup/cpu");
	CHECK_STR(root, "/");
	CHECK(cgroup_parse_mountinfo(mi, "memory", mnt, root, sizeof(mnt)) == 0);
	CHECK_STR(mnt, "/sys/fs/cgroup/my memory");
	CHECK_STR(root, "/docker/x");
	CHECK(cgroup_parse_mountinfo(mi, NULL, mnt, root, sizeof(mnt)) == 0);
	CHECK_STR(mnt, "/sys/fs/cgroup/unified");
	CHECK(cgroup_parse_mountinfo(mi, "pids", mnt, root, sizeof(mnt)) < 0);
	/* the tmpfs's "mode=755" option must not pass for a controller */
	CHECK(cgroup_parse_mountinfo(mi, "mode", mnt, root, sizeof(mnt)) < 0);
}

static void test_keyed(void)
{
	uint64_t v = 99;

	CHECK(cgroup_keyed_value("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", "oom_kill", &v) == 0);
	CHECK(v == 3);
	CHECK(cgroup_keyed_value("low 0\nhigh 0\nmax 12\noom 1\noom_kill 0\n", "max", &v) == 0);
	CHECK(v == 12);
	CHECK(cgroup_keyed_value("max 5\n", "oom_kill", &v) < 0);
	CHECK(cgroup_keyed_value("oom_killx 5\n", "oom_kill", &v) < 0);
	CHECK(cgroup_list_has("cpuset cpu io memory hugetlb pids\n", "pids"));
	CHECK(cgroup_list_has("cpuset cpu io memory", "cpu"));
	CHECK(!cgroup_list_has("cpuset io memory", "cpu"));
	CHECK(!cgroup_list_has("hugetlb", "memory"));
}

static void avail_none(struct sbx_limits_avail *av)
{
	memset(av, 0, sizeof(*av));
	av->nofile_hard = 1024;
	av->fsize_hard = UINT64_MAX;
	av->ncpus = 4;
}

static void test_choose(void)
{
	struct sbx_config cfg;
	struct sbx_limits_avail av;
	enum sbx_limit_mech m[SBX_LIM__COUNT];
	struct sbx_err err = { 0 };

	config_init(&cfg);
	cfg.memory = 64 << 20;
	cfg.pids = 50;
	cfg.cpus_milli = 1500;
	cfg.file_size = 0;
	cfg.open_files = 256;
	cfg.enforce = SBX_ENFORCE_BEST;
	avail_none(&av);
	CHECK(limits_choose(&cfg, &av, m, &err) == 0);
	CHECK(m[SBX_LIM_MEMORY] == SBX_MECH_ACCOUNTED && m[SBX_LIM_PIDS] == SBX_MECH_RLIMIT);
	CHECK(m[SBX_LIM_CPUS] == SBX_MECH_AFFINITY && m[SBX_LIM_FILE_SIZE] == SBX_MECH_NONE);
	CHECK(m[SBX_LIM_OPEN_FILES] == SBX_MECH_RLIMIT);

	/* v2 where it has the controller, v1 for the rest */
	strcpy(av.v2_parent, "/sys/fs/cgroup/user.slice");
	av.v2[SBX_CTL_MEMORY] = 1;
	strcpy(av.v1_parent[SBX_CTL_PIDS], "/sys/fs/cgroup/pids");
	CHECK(limits_choose(&cfg, &av, m, &err) == 0);
	CHECK(m[SBX_LIM_MEMORY] == SBX_MECH_CGROUP2 && m[SBX_LIM_PIDS] == SBX_MECH_CGROUP1);
	CHECK(m[SBX_LIM_CPUS] == SBX_MECH_AFFINITY);

	/* strict refuses the affinity fallback, naming the limit */
	cfg.enforce = SBX_ENFORCE_STRICT;
	CHECK(limits_choose(&cfg, &av, m, &err) < 0);
	CHECK_CONTAINS(err.msg, "'cpus'");
	CHECK_CONTAINS(err.hint, "doctor");
	cfg.cpus_milli = 0;
	CHECK(limits_choose(&cfg, &av, m, &err) == 0);
	CHECK(m[SBX_LIM_CPUS] == SBX_MECH_NONE);
	/* a user namespace cannot raise a hard rlimit */
	cfg.open_files = 4096;
	CHECK(limits_choose(&cfg, &av, m, &err) < 0);
	CHECK_CONTAINS(err.msg, "'open_files'");
	cfg.enforce = SBX_ENFORCE_BEST;
	CHECK(limits_choose(&cfg, &av, m, &err) == 0);
	config_free(&cfg);
}

static void test_names_and_affinity(void)
{
	struct sbx_limits lim;

	memset(&lim, 0, sizeof(lim));
	lim.mech[SBX_LIM_MEMORY] = SBX_MECH_CGROUP1;
	lim.mech[SBX_LIM_PIDS] = SBX_MECH_RLIMIT;
	lim.mech[SBX_LIM_CPUS] = SBX_MECH_AFFINITY;
	lim.mech[SBX_LIM_OPEN_FILES] = SBX_MECH_CGROUP2;
	CHECK_STR(limits_mechanism(&lim, SBX_K_MEMORY), "cgroup1");
	CHECK_STR(limits_mechanism(&lim, SBX_K_PIDS), "rlimit");
	CHECK_STR(limits_mechanism(&lim, SBX_K_CPUS), "affinity");
	CHECK_STR(limits_mechanism(&lim, SBX_K_OPEN_FILES), "cgroup2");
	CHECK_STR(limits_mechanism(&lim, SBX_K_FILE_SIZE), "none");
	CHECK_STR(limits_mechanism(&lim, SBX_K_TIMEOUT), "none");
	CHECK(!limits_memory_accounted(&lim));
	lim.mech[SBX_LIM_MEMORY] = SBX_MECH_ACCOUNTED;
	CHECK_STR(limits_mechanism(&lim, SBX_K_MEMORY), "rlimit+accounting");
	CHECK(limits_memory_accounted(&lim));
	CHECK(limits_affinity_count(1500, 8) == 2);
	CHECK(limits_affinity_count(1000, 8) == 1);
	CHECK(limits_affinity_count(1, 8) == 1);
	CHECK(limits_affinity_count(16000, 8) == 8);
}

int main(void)
{
	test_parse_self();
	test_parse_mountinfo();
	test_keyed();
	test_choose();
	test_names_and_affinity();
	return unit_done("test_limits");
}
