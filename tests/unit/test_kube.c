/* test_kube.c - the shape of `profile export --format kube`: Kubernetes is
 * not available here, so the manifests are read back with a small reader of
 * the block YAML the exporter writes (paths like
 * spec.template.spec.containers[0].image) and checked for the fields each
 * kind requires, quantities in Kubernetes syntax, DNS-1123 names, the
 * NetworkPolicy of each egress mode, and the notes of what is not expressed. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/options.h"
#include "base/util.h"
#include "cluster/kube_yaml.h"
#include "unit.h"

#define MAXV 512

struct doc {
	char *path[MAXV];
	char *value[MAXV];
	int n;
};

struct frame {
	int indent, item, count;
	char tok[64];
};

static void add(struct doc *d, struct frame *st, int depth, const char *key, const char *val)
{
	char p[512] = "";
	for (int i = 0; i < depth; i++) {
		if (!st[i].item && p[0])
			strcat(p, ".");
		strcat(p, st[i].tok);
	}
	if (p[0] && key[0])
		strcat(p, ".");
	strcat(p, key);
	if (d->n < MAXV) {
		d->path[d->n] = xstrdup(p);
		d->value[d->n++] = xstrdup(val);
	}
}

/* One "key: value" at indent i; returns the new depth. */
static int key_line(struct doc *d, struct frame *st, int depth, int i, const char *c)
{
	const char *colon = strstr(c, ": ");
	size_t klen = colon ? (size_t)(colon - c) : strlen(c) - 1; /* "key:" */
	char key[64];

	while (depth > 0 && st[depth - 1].indent >= i)
		depth--;
	snprintf(key, sizeof(key), "%.*s", (int)klen, c);
	if (colon && colon[2]) {
		add(d, st, depth, key, colon + 2);
		return depth;
	}
	st[depth] = (struct frame){ .indent = i };
	snprintf(st[depth].tok, sizeof(st[depth].tok), "%s", key);
	return depth + 1;
}

/* Splits the YAML into documents of (path, value) pairs. */
static int parse(const char *yaml, struct doc *docs, int max)
{
	_cleanup_free_ char *text = xstrdup(yaml);
	struct frame st[32];
	int nd = 0, depth = 0;
	char *save = NULL;

	memset(docs, 0, sizeof(*docs) * (size_t)max);
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int i = (int)strspn(line, " ");
		const char *c = line + i;
		if (!*c || *c == '#')
			continue;
		if (!strcmp(line, "---")) {
			nd++, depth = 0;
			continue;
		}
		if (nd >= max)
			break;
		if (c[0] == '-' && c[1] == ' ') {
			while (depth > 0 && (st[depth - 1].indent > i ||
					     (st[depth - 1].indent == i && st[depth - 1].item)))
				depth--;
			int idx = depth > 0 ? st[depth - 1].count++ : 0;
			st[depth] = (struct frame){ .indent = i, .item = 1 };
			snprintf(st[depth].tok, sizeof(st[depth].tok), "[%d]", idx);
			depth++;
			if (strchr("{[\"", c[2])) /* a scalar or flow item */
				add(&docs[nd], st, depth, "", c + 2);
			else
				depth = key_line(&docs[nd], st, depth, i + 2, c + 2);
		} else {
			depth = key_line(&docs[nd], st, depth, i, c);
		}
	}
	return nd + 1;
}

static const char *get(const struct doc *d, const char *path)
{
	for (int i = 0; i < d->n; i++)
		if (!strcmp(d->path[i], path))
			return d->value[i];
	return NULL;
}

static void free_docs(struct doc *docs, int n)
{
	for (int k = 0; k < n; k++)
		for (int i = 0; i < docs[k].n; i++) {
			free(docs[k].path[i]);
			free(docs[k].value[i]);
		}
}

/* "512Mi", "500m", "2": a Kubernetes quantity, quoted. */
static int quantity_ok(const char *v)
{
	static const char *const suf[] = { "", "m", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	size_t n = v ? strlen(v) : 0;
	if (n < 3 || v[0] != '"' || v[n - 1] != '"' || !isdigit((unsigned char)v[1]))
		return 0;
	size_t d = 1 + strspn(v + 1, "0123456789");
	for (size_t i = 0; i < ARRAY_SIZE(suf); i++)
		if (strlen(suf[i]) == n - 1 - d && !strncmp(v + d, suf[i], n - 1 - d))
			return 1;
	return 0;
}

static int dns_label_ok(const char *v)
{
	size_t n = v ? strlen(v) : 0;
	if (n < 3 || n - 2 > 63 || v[0] != '"' || v[n - 1] != '"' || v[1] == '-' || v[n - 2] == '-')
		return 0;
	for (size_t i = 1; i < n - 1; i++)
		if (!islower((unsigned char)v[i]) && !isdigit((unsigned char)v[i]) && v[i] != '-')
			return 0;
	return 1;
}

/* Every quantity anywhere in the document is in Kubernetes syntax. */
static void check_quantities(const struct doc *d)
{
	static const char *const keys[] = { ".memory", ".cpu", ".ephemeral-storage", ".sizeLimit" };
	for (int i = 0; i < d->n; i++)
		for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
			size_t pl = strlen(d->path[i]), kl = strlen(keys[k]);
			if (pl > kl && !strcmp(d->path[i] + pl - kl, keys[k]))
				CHECK(quantity_ok(d->value[i]));
		}
}

static void cfg_make(struct sbx_config *cfg, const char *const *kv)
{
	struct sbx_err err;
	config_init(cfg);
	config_set(cfg, options_by_key(SBX_K_PROFILE), "lab_2024.Python", "t", 1, &err);
	for (int i = 0; kv[i]; i += 2) {
		const struct sbx_option *o = NULL;
		for (size_t j = 0; j < sbx_options_count && !o; j++) /* the first: [limits] timeout */
			if (sbx_options[j].pkey && !strcmp(sbx_options[j].pkey, kv[i]))
				o = &sbx_options[j];
		if (!strcmp(kv[i], "kind"))
			o = options_by_key(SBX_K_KIND);
		CHECK(o && config_set(cfg, o, kv[i + 1], "t", 0, &err) == 0);
	}
}

static char *export(const struct sbx_config *cfg, const char *const *cmd, struct kube_notes *notes)
{
	struct sbx_err err;
	char *yaml = NULL;
	CHECK(kube_yaml(cfg, cmd, &yaml, notes, &err) == 0);
	return yaml ? yaml : xstrdup("");
}

static void test_quantities(void)
{
	char b[32];
	kube_quantity_bytes(512ULL << 20, b, sizeof(b));
	CHECK_STR(b, "512Mi");
	kube_quantity_bytes(2ULL << 30, b, sizeof(b));
	CHECK_STR(b, "2Gi");
	kube_quantity_bytes(1536, b, sizeof(b));
	CHECK_STR(b, "1536");
	kube_quantity_bytes(1ULL << 40, b, sizeof(b));
	CHECK_STR(b, "1Ti");
	kube_quantity_cpu(500, b, sizeof(b));
	CHECK_STR(b, "500m");
	kube_quantity_cpu(2000, b, sizeof(b));
	CHECK_STR(b, "2");
	kube_quantity_cpu(1500, b, sizeof(b));
	CHECK_STR(b, "1500m");
	kube_name("lab_2024.Python", b, sizeof(b));
	CHECK_STR(b, "lab-2024-python");
	kube_name("/home/t/profiles/CI.ini", b, sizeof(b));
	CHECK_STR(b, "ci");
	kube_name("--", b, sizeof(b));
	CHECK_STR(b, "profile");
}

static void test_job(void)
{
	static const char *const kv[] = { "timeout", "90s", "memory", "512M", "cpus", "0.5",
					  "disk", "2G", "pids", "64", "env", "GREETING=say \"hi\"\nnow",
					  NULL };
	static const char *const cmd[] = { "python3", "-c", "print('x')", NULL };
	struct sbx_config cfg;
	struct kube_notes notes = { 0 };
	struct doc docs[4];

	cfg_make(&cfg, kv);
	_cleanup_free_ char *y = export(&cfg, cmd, &notes);
	int n = parse(y, docs, 4);
	CHECK(n == 2);
	const struct doc *j = &docs[0];
	CHECK_STR(get(j, "apiVersion"), "batch/v1");
	CHECK_STR(get(j, "kind"), "Job");
	CHECK(dns_label_ok(get(j, "metadata.name")));
	CHECK_STR(get(j, "metadata.name"), "\"sbxrun-lab-2024-python\"");
	CHECK_STR(get(j, "spec.backoffLimit"), "0");
	CHECK_STR(get(j, "spec.activeDeadlineSeconds"), "90");
	const char *p = "spec.template.spec.";
	char k[256];
#define AT(s) (snprintf(k, sizeof(k), "%s%s", p, s), get(j, k))
	CHECK_STR(AT("restartPolicy"), "\"Never\"");
	CHECK_STR(AT("automountServiceAccountToken"), "false");
	CHECK_STR(AT("securityContext.seccompProfile.type"), "\"Localhost\"");
	CHECK_STR(AT("securityContext.seccompProfile.localhostProfile"), "\"sbxrun-lab-2024-python.json\"");
	CHECK_STR(AT("containers[0].name"), "\"main\"");
	CHECK_STR(AT("containers[0].image"), "\"localhost/minimal:latest\"");
	CHECK_STR(AT("containers[0].command"), "[\"python3\", \"-c\", \"print('x')\"]");
	CHECK_STR(AT("containers[0].workingDir"), "\"/workspace\"");
	CHECK_STR(AT("containers[0].resources.limits.memory"), "\"512Mi\"");
	CHECK_STR(AT("containers[0].resources.limits.cpu"), "\"500m\"");
	CHECK_STR(AT("containers[0].resources.limits.ephemeral-storage"), "\"2Gi\"");
	CHECK_STR(AT("containers[0].securityContext.allowPrivilegeEscalation"), "false");
	CHECK_STR(AT("containers[0].securityContext.readOnlyRootFilesystem"), "true");
	CHECK_STR(AT("containers[0].securityContext.capabilities.drop"), "[\"ALL\"]");
	CHECK_STR(AT("containers[0].volumeMounts[0].name"), "\"workspace\"");
	CHECK_STR(AT("containers[0].volumeMounts[0].mountPath"), "\"/workspace\"");
	CHECK_STR(AT("containers[0].volumeMounts[1].mountPath"), "\"/tmp\"");
	CHECK_STR(AT("volumes[0].name"), "\"workspace\"");
	CHECK_STR(AT("volumes[0].emptyDir.sizeLimit"), "\"2Gi\"");
	/* an env value with quotes and a newline stays one escaped scalar */
	CHECK_STR(AT("containers[0].env[1].name"), "\"GREETING\"");
	CHECK_STR(AT("containers[0].env[1].value"), "\"say \\\"hi\\\"\\nnow\"");
	CHECK_STR(get(j, "spec.template.metadata.annotations.seccomp.security.alpha.kubernetes.io/pod"),
		  "\"localhost/sbxrun-lab-2024-python.json\"");
#undef AT
	check_quantities(j);
	/* egress none: one policy, all egress denied */
	CHECK_STR(get(&docs[1], "kind"), "NetworkPolicy");
	CHECK_STR(get(&docs[1], "apiVersion"), "networking.k8s.io/v1");
	CHECK_STR(get(&docs[1], "spec.podSelector.matchLabels.sbxrun.io/role"), "\"job\"");
	CHECK_STR(get(&docs[1], "spec.policyTypes"), "[\"Egress\"]");
	CHECK_STR(get(&docs[1], "spec.egress"), "[]");
	CHECK(dns_label_ok(get(&docs[1], "metadata.name")));
	/* what is not expressed: in the notes and as a comment */
	int pids_noted = 0;
	for (size_t i = 0; i < notes.n; i++)
		pids_noted |= strstr(notes.v[i], "pids = 64") != NULL;
	CHECK(pids_noted);
	CHECK_CONTAINS(y, "# - pids = 64");
	kube_notes_free(&notes);
	free_docs(docs, n);
	config_free(&cfg);
}

static void test_pod_packages(void)
{
	static const char *const kv[] = { "timeout", "5m", "egress", "packages", "kind", "pod", NULL };
	struct sbx_config cfg;
	struct kube_notes notes = { 0 };
	struct doc docs[7];

	cfg_make(&cfg, kv);
	_cleanup_free_ char *y = export(&cfg, NULL, &notes);
	int n = parse(y, docs, 7);
	CHECK(n == 6);
	/* the proxy's password: a Secret made first, read by both sides */
	const struct doc *sec = &docs[0];
	CHECK_STR(get(sec, "apiVersion"), "v1");
	CHECK_STR(get(sec, "kind"), "Secret");
	CHECK_STR(get(sec, "metadata.name"), "\"sbxrun-proxy-lab-2024-python\"");
	const char *pw = get(sec, "stringData.password");
	CHECK(pw && strlen(pw) == 34 && strspn(pw + 1, "0123456789abcdef") == 32);
	const struct doc *pod = &docs[1];
	CHECK_STR(get(pod, "apiVersion"), "v1");
	CHECK_STR(get(pod, "kind"), "Pod");
	CHECK_STR(get(pod, "spec.restartPolicy"), "\"Never\"");
	CHECK_STR(get(pod, "spec.activeDeadlineSeconds"), "300");
	CHECK(get(pod, "spec.containers[0].command") == NULL); /* the image's Cmd */
	CHECK_STR(get(pod, "spec.containers[0].securityContext.readOnlyRootFilesystem"), "false");
	CHECK_STR(get(pod, "spec.containers[0].env[0].value"), "\"packages\"");
	/* the password from the Secret before the URLs that carry it */
	CHECK_STR(get(pod, "spec.containers[0].env[1].name"), "\"SBXRUN_PROXY_PASSWORD\"");
	CHECK_STR(get(pod, "spec.containers[0].env[1].valueFrom.secretKeyRef.name"),
		  "\"sbxrun-proxy-lab-2024-python\"");
	CHECK_STR(get(pod, "spec.containers[0].env[1].valueFrom.secretKeyRef.key"), "\"password\"");
	CHECK_STR(get(pod, "spec.containers[0].env[2].name"), "\"SBXRUN_PROXY\"");
	int proxied = 0;
	for (int i = 0; i < pod->n; i++)
		proxied += strcmp(pod->value[i],
				  "\"http://sbxrun:$(SBXRUN_PROXY_PASSWORD)@sbxrun-proxy-lab-2024-python:3128\"") == 0;
	CHECK(proxied >= 5);
	/* the package gateway's endpoints, asked through the proxy, as in a sandbox */
	static const char *const gw[][2] = {
		{ "NPM_CONFIG_REGISTRY", "http://packages.sbxrun.internal/npm/" },
		{ "PIP_INDEX_URL", "http://packages.sbxrun.internal/pypi/simple/" },
		{ "UV_INDEX_URL", "http://packages.sbxrun.internal/pypi/simple/" },
		{ "UV_DEFAULT_INDEX", "http://packages.sbxrun.internal/pypi/simple/" },
		{ "PIP_TRUSTED_HOST", "packages.sbxrun.internal" },
	};
	for (size_t g = 0; g < ARRAY_SIZE(gw); g++) {
		const char *val = NULL;
		for (int e = 0; e < 40 && !val; e++) {
			char kn[96], kvl[96];
			snprintf(kn, sizeof(kn), "spec.containers[0].env[%d].name", e);
			snprintf(kvl, sizeof(kvl), "spec.containers[0].env[%d].value", e);
			const char *nm = get(pod, kn);
			if (nm && strlen(nm) == strlen(gw[g][0]) + 2 && !strncmp(nm + 1, gw[g][0], strlen(gw[g][0])))
				val = get(pod, kvl);
		}
		_cleanup_free_ char *want = xasprintf("\"%s\"", gw[g][1]);
		CHECK_STR(val, want);
	}
	/* the password itself is written once, in the Secret */
	char hex[33] = "";
	if (pw && strlen(pw) == 34)
		memcpy(hex, pw + 1, 32);
	const char *once = strstr(y, hex);
	CHECK(hex[0] && once && !strstr(once + 1, hex));
	check_quantities(pod);
	/* the job may reach the proxy's port and DNS, nothing else */
	const struct doc *jp = &docs[2];
	CHECK_STR(get(jp, "kind"), "NetworkPolicy");
	CHECK_STR(get(jp, "spec.policyTypes"), "[\"Egress\"]");
	CHECK_STR(get(jp, "spec.egress[0].to[0].podSelector.matchLabels.sbxrun.io/role"), "\"proxy\"");
	CHECK_STR(get(jp, "spec.egress[0].ports[0]"), "{protocol: \"TCP\", port: 3128}");
	CHECK_STR(get(jp, "spec.egress[1].to[0].podSelector.matchLabels.k8s-app"), "\"kube-dns\"");
	CHECK(get(jp, "spec.egress[2].to[0].podSelector.matchLabels.k8s-app") == NULL);
	/* the proxy: in from the job only */
	const struct doc *pp = &docs[3];
	CHECK_STR(get(pp, "spec.podSelector.matchLabels.sbxrun.io/role"), "\"proxy\"");
	CHECK_STR(get(pp, "spec.ingress[0].from[0].podSelector.matchLabels.sbxrun.io/role"), "\"job\"");
	const struct doc *dep = &docs[4];
	CHECK_STR(get(dep, "apiVersion"), "apps/v1");
	CHECK_STR(get(dep, "kind"), "Deployment");
	CHECK_STR(get(dep, "spec.selector.matchLabels.sbxrun.io/role"), "\"proxy\"");
	CHECK_STR(get(dep, "spec.template.metadata.labels.sbxrun.io/role"), "\"proxy\"");
	CHECK_CONTAINS(get(dep, "spec.template.spec.containers[0].command"),
		       "[\"sbxrun\", \"proxy\", \"--listen\", \"0.0.0.0:3128\", \"--profile\", \"lab_2024.Python\"");
	/* the proxy reads the password from the Secret, mounted; never argv */
	CHECK_CONTAINS(get(dep, "spec.template.spec.containers[0].command"),
		       "\"--auth-file\", \"/etc/sbxrun/proxy-auth/password\"");
	/* its gateway keeps the cap the cache's volume was sized from (default 10G) */
	CHECK_CONTAINS(get(dep, "spec.template.spec.containers[0].command"), "\"--cache-max\", \"10G\"]");
	CHECK_STR(get(dep, "spec.template.spec.containers[0].volumeMounts[0].name"), "\"proxy-auth\"");
	CHECK_STR(get(dep, "spec.template.spec.containers[0].volumeMounts[0].mountPath"),
		  "\"/etc/sbxrun/proxy-auth\"");
	CHECK_STR(get(dep, "spec.template.spec.containers[0].volumeMounts[0].readOnly"), "true");
	CHECK_STR(get(dep, "spec.template.spec.volumes[0].name"), "\"proxy-auth\"");
	CHECK_STR(get(dep, "spec.template.spec.volumes[0].secret.secretName"), "\"sbxrun-proxy-lab-2024-python\"");
	/* the gateway's cache: a volume of its own, the root stays read-only */
	CHECK_STR(get(dep, "spec.template.spec.containers[0].env[0].name"), "\"XDG_CACHE_HOME\"");
	CHECK_STR(get(dep, "spec.template.spec.containers[0].env[0].value"), "\"/cache\"");
	CHECK_STR(get(dep, "spec.template.spec.containers[0].volumeMounts[1].name"), "\"package-cache\"");
	CHECK_STR(get(dep, "spec.template.spec.containers[0].volumeMounts[1].mountPath"), "\"/cache\"");
	CHECK_STR(get(dep, "spec.template.spec.volumes[1].name"), "\"package-cache\"");
	CHECK_STR(get(dep, "spec.template.spec.volumes[1].emptyDir.sizeLimit"), "\"11Gi\"");
	CHECK_STR(get(dep, "spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem"), "true");
	check_quantities(dep);
	const struct doc *svc = &docs[5];
	CHECK_STR(get(svc, "kind"), "Service");
	CHECK_STR(get(svc, "metadata.name"), "\"sbxrun-proxy-lab-2024-python\"");
	CHECK_STR(get(svc, "spec.selector.sbxrun.io/role"), "\"proxy\"");
	kube_notes_free(&notes);
	free_docs(docs, n);
	config_free(&cfg);
}

/* The package cache's volume follows [packages] cache_max: the cap and a
 * tenth of it (at least 1Gi) for what the cap does not count; the sidecar
 * is told the same cap; an unlimited cap has no sizeLimit, and a note. */
static void test_cache_volume(void)
{
	static const char *const caps[][3] = {
		{ "10G", "10G", "\"11Gi\"" }, { "20G", "20G", "\"22Gi\"" },
		{ "2G", "2G", "\"3Gi\"" },     { "100K", "100K", "\"1025Mi\"" },
		{ "15G", "15G", "\"16896Mi\"" },  { "unlimited", "unlimited", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(caps); i++) {
		const char *const kv[] = { "egress", "packages", "cache_max", caps[i][0], NULL };
		struct sbx_config cfg;
		struct kube_notes notes = { 0 };
		struct doc docs[6];

		cfg_make(&cfg, kv);
		_cleanup_free_ char *y = export(&cfg, NULL, &notes);
		int n = parse(y, docs, 6);
		CHECK(n == 6);
		const struct doc *dep = &docs[4];
		const char *spec = "spec.template.spec.";
		char k[128];
		snprintf(k, sizeof(k), "%svolumes[1].name", spec);
		CHECK_STR(get(dep, k), "\"package-cache\"");
		snprintf(k, sizeof(k), "%svolumes[1].emptyDir.sizeLimit", spec);
		if (caps[i][2])
			CHECK_STR(get(dep, k), caps[i][2]);
		else
			CHECK(get(dep, k) == NULL);
		snprintf(k, sizeof(k), "%scontainers[0].command", spec);
		_cleanup_free_ char *flag = xasprintf("\"--cache-max\", \"%s\"]", caps[i][1]);
		CHECK_CONTAINS(get(dep, k), flag);
		check_quantities(dep);
		int noted = 0;
		for (size_t j = 0; j < notes.n; j++)
			noted |= strstr(notes.v[j], "cache_max = unlimited") != NULL;
		CHECK(noted == !caps[i][2]);
		kube_notes_free(&notes);
		free_docs(docs, n);
		config_free(&cfg);
	}
	CHECK(kube_cache_limit(0) == 0);
	CHECK(kube_cache_limit(10ULL << 30) == 11ULL << 30);
	CHECK(kube_cache_limit(1) == (1ULL << 30) + (1ULL << 20));
}

static void test_full_and_image_ref(void)
{
	static const char *const kv[] = { "egress", "full", NULL };
	struct sbx_config cfg;
	struct kube_notes notes = { 0 };
	struct doc docs[3];
	struct sbx_err err;
	char *y = NULL;

	cfg_make(&cfg, kv);
	config_set(&cfg, options_by_key(SBX_K_IMAGE_REF), "registry.example/lab/py:1", "t", 1, &err);
	y = export(&cfg, NULL, &notes);
	CHECK(parse(y, docs, 3) == 1); /* no NetworkPolicy for full egress */
	CHECK_STR(get(&docs[0], "spec.template.spec.containers[0].image"), "\"registry.example/lab/py:1\"");
	CHECK(get(&docs[0], "spec.activeDeadlineSeconds") == NULL);
	free_docs(docs, 1);
	free(y);
	kube_notes_free(&notes);
	config_set(&cfg, options_by_key(SBX_K_IMAGE_REF), "bad\"ref", "t", 1, &err);
	y = NULL;
	CHECK(kube_yaml(&cfg, NULL, &y, &notes, &err) < 0);
	CHECK_CONTAINS(err.msg, "--image-ref");
	free(y);
	kube_notes_free(&notes);
	config_free(&cfg);
}

/* The value of the main container's variable NAME, quoted, or NULL. */
static const char *env_of(const struct doc *pod, const char *name)
{
	for (int e = 0; e < 60; e++) {
		char kn[96], kvl[96];
		snprintf(kn, sizeof(kn), "spec.containers[0].env[%d].name", e);
		snprintf(kvl, sizeof(kvl), "spec.containers[0].env[%d].value", e);
		const char *nm = get(pod, kn);
		if (nm && strlen(nm) == strlen(name) + 2 && !strncmp(nm + 1, name, strlen(name)))
			return get(pod, kvl);
	}
	return NULL;
}

/* Cargo, Maven and Gradle in the pod (toolconf.h): a ConfigMap of their
 * files, each mounted read-only where the tool reads it, naming the
 * sidecar as their proxy with its password from the environment; Go and
 * Cargo's protocol by variables, as in a sandbox. */
static void test_pod_tools(void)
{
	static const char *const kv[] = { "egress", "packages", "kind", "pod",
					   "maven", "https://maven.example.org/m2/",
					   "cargo", "https://index.example.org/",
					   "go", "https://goproxy.example.org/",
					   "go_sumdb", "sum.example.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ey18htTTgJ4ayHnVkEwIP8a https://sum.example.org/",
					   NULL };
	static const char *const mounts[][2] = {
		{ "/.cargo/config.toml", "config.toml" },
		{ "/root/.m2/settings.xml", "settings.xml" },
		{ "/root/.gradle/init.d/sbxrun.gradle", "sbxrun.gradle" },
	};
	struct sbx_config cfg;
	struct kube_notes notes = { 0 };
	struct doc docs[8];

	cfg_make(&cfg, kv);
	_cleanup_free_ char *y = export(&cfg, NULL, &notes);
	int n = parse(y, docs, 8);
	CHECK(n == 7);
	const struct doc *cm = &docs[1], *pod = &docs[2];
	CHECK_STR(get(cm, "kind"), "ConfigMap");
	CHECK_STR(get(cm, "metadata.name"), "\"sbxrun-tools-lab-2024-python\"");
	CHECK_CONTAINS(get(cm, "data.config.toml"), "registry = \\\"sparse+http://packages.sbxrun.internal/cargo/\\\"");
	CHECK_CONTAINS(get(cm, "data.settings.xml"), "<url>http://packages.sbxrun.internal/maven/</url>");
	CHECK_CONTAINS(get(cm, "data.settings.xml"), "<host>sbxrun-proxy-lab-2024-python</host>\\n      <port>3128</port>\\n"
		       "      <username>sbxrun</username>\\n      <password>${env.SBXRUN_PROXY_PASSWORD}</password>");
	CHECK_CONTAINS(get(cm, "data.sbxrun.gradle"), "new URI('http://packages.sbxrun.internal/maven/')");
	CHECK_CONTAINS(get(cm, "data.sbxrun.gradle"), "System.setProperty(p + '.proxyHost', 'sbxrun-proxy-lab-2024-python')");
	CHECK_CONTAINS(get(cm, "data.sbxrun.gradle"), "System.getenv('SBXRUN_PROXY_PASSWORD')");
	CHECK_STR(get(pod, "kind"), "Pod");
	for (size_t m = 0; m < ARRAY_SIZE(mounts); m++) {
		int found = 0;
		for (int i = 0; i < 12; i++) {
			char mp[96], sp[96], nm[96], ro[96];
			snprintf(mp, sizeof(mp), "spec.containers[0].volumeMounts[%d].mountPath", i);
			snprintf(sp, sizeof(sp), "spec.containers[0].volumeMounts[%d].subPath", i);
			snprintf(nm, sizeof(nm), "spec.containers[0].volumeMounts[%d].name", i);
			snprintf(ro, sizeof(ro), "spec.containers[0].volumeMounts[%d].readOnly", i);
			_cleanup_free_ char *want = xasprintf("\"%s\"", mounts[m][0]);
			_cleanup_free_ char *sub = xasprintf("\"%s\"", mounts[m][1]);
			if (get(pod, mp) && !strcmp(get(pod, mp), want)) {
				CHECK_STR(get(pod, sp), sub);
				CHECK_STR(get(pod, nm), "\"tools\"");
				CHECK_STR(get(pod, ro), "true");
				found++;
			}
		}
		CHECK(found == 1);
	}
	CHECK_STR(get(pod, "spec.volumes[1].name"), "\"tools\"");
	CHECK_STR(get(pod, "spec.volumes[1].configMap.name"), "\"sbxrun-tools-lab-2024-python\"");
	CHECK_STR(env_of(pod, "CARGO_REGISTRIES_CRATES_IO_PROTOCOL"), "\"sparse\"");
	CHECK_STR(env_of(pod, "GOPROXY"), "\"http://packages.sbxrun.internal/go\"");
	CHECK_STR(env_of(pod, "GOSUMDB"), "\"sum.example.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ey18htTTgJ4ayHnVkEwIP8a "
		  "http://packages.sbxrun.internal/go/sumdb/sum.example.org\"");
	CHECK_STR(env_of(pod, "GOFLAGS"), "\"-mod=mod\"");
	CHECK_STR(env_of(pod, "GONOSUMDB"), "\"\"");
	free_docs(docs, n);
	kube_notes_free(&notes);
	/* none named: no ConfigMap, no mount, no variable */
	config_free(&cfg);
	static const char *const plain[] = { "egress", "packages", "kind", "pod", NULL };
	cfg_make(&cfg, plain);
	free(y);
	y = export(&cfg, NULL, &notes);
	CHECK(!strstr(y, "ConfigMap") && !strstr(y, "tools") && !strstr(y, "GOPROXY") && !strstr(y, "CARGO_REG"));
	kube_notes_free(&notes);
	config_free(&cfg);
}

int main(void)
{
	test_quantities();
	test_job();
	test_pod_packages();
	test_pod_tools();
	test_cache_volume();
	test_full_and_image_ref();
	return unit_done("test_kube");
}
