/* kube_yaml.c - a resolved profile as Kubernetes objects: a batch/v1 Job
 * (or a bare Pod) whose limits, storage and confinement mean what the
 * profile means, the NetworkPolicy of its egress mode and, for packages, the
 * egress proxy (`sbxrun proxy`) beside it. The YAML is written by hand with
 * every string double-quoted and escaped; quantities are Kubernetes's (Mi,
 * Gi, m). What has no Kubernetes equivalent is listed, not dropped.
 *
 * The proxy runs in its own pod behind a Service, not as a container of the
 * job's pod: a NetworkPolicy selects pods, and containers of one pod share
 * one network namespace, so a same-pod sidecar allowed out would let the
 * main container out too.
 *
 * The proxy listens on the pod network, so it wants the shared secret:
 * a Secret holds a password made at export time, the proxy reads it from
 * the Secret mounted as a file (--auth-file, never its command line), and
 * the job's proxy URLs carry it (http://sbxrun:$(PASSWORD)@service:3128,
 * expanded by Kubernetes from the same Secret).
 *
 * The proxy serves the package gateway too, with the profile's [packages]
 * rules and a cache of its own (an emptyDir whose sizeLimit follows
 * cache_max, which the proxy is given on its command line, so the volume
 * and the gateway's cap come from one number). The job's package managers
 * are pointed at it by the variables a sandbox gets (the network plan's),
 * with the same URLs: http://packages.sbxrun.internal/npm/ and so on. That
 * name need not resolve in the pod: the managers send plain-HTTP requests
 * to their proxy, the sidecar, as absolute URIs (npm, pip and uv with
 * their proxy settings, apt with http_proxy), with the credentials of the
 * proxy URL, and the sidecar hands those of the gateway's name to it. The
 * index documents' links name it too, so one name serves every hop. */
#define _GNU_SOURCE
#include "cluster/kube_yaml.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/util.h"
#include "gateway/gateway.h"
#include "net/netplan.h"
#include "sandbox/toolconf.h"

#define PROXY_PORT 3128
#define PROXY_IMAGE "localhost/sbxrun:latest"
#define AUTH_DIR "/etc/sbxrun/proxy-auth"
#define AUTH_USER "sbxrun"
#define PASSWORD_ENV "SBXRUN_PROXY_PASSWORD"
#define CACHE_DIR "/cache" /* the gateway's cache in the proxy's pod (XDG_CACHE_HOME) */
#define CACHE_SLACK_MIN (1ULL << 30)
#define POD_HOME "/root" /* the main container's HOME (root's; its scratch volume) */

struct kube {
	FILE *f;
	const struct sbx_config *cfg;
	struct sbx_netplan np; /* the proxy's variables, the NetworkPolicy */
	char name[48];  /* DNS-1123 label made from the profile name */
	const char *ref;
	struct kube_notes *notes;
};

void kube_notes_free(struct kube_notes *n)
{
	for (size_t i = 0; i < n->n; i++)
		free(n->v[i]);
	free(n->v);
	memset(n, 0, sizeof(*n));
}

static void note(struct kube *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct kube *k, const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	k->notes->v = xrealloc(k->notes->v, (k->notes->n + 1) * sizeof(char *));
	k->notes->v[k->notes->n++] = s;
}

void kube_quantity_bytes(uint64_t b, char *buf, size_t size)
{
	static const char *const unit[] = { "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	int u = -1;
	while (u < 5 && b >= 1024 && b % 1024 == 0) {
		b /= 1024;
		u++;
	}
	snprintf(buf, size, "%llu%s", (unsigned long long)b, u < 0 ? "" : unit[u]);
}

void kube_quantity_cpu(uint64_t milli, char *buf, size_t size)
{
	if (milli % 1000 == 0)
		snprintf(buf, size, "%llu", (unsigned long long)(milli / 1000));
	else
		snprintf(buf, size, "%llum", (unsigned long long)milli);
}

void kube_name(const char *s, char *out, size_t size)
{
	const char *slash = strrchr(s, '/');
	size_t len, n = 0;

	if (slash) /* a profile given as a path: its file name without .ini */
		s = slash + 1;
	len = strlen(s);
	if (slash && len > 4 && strcmp(s + len - 4, ".ini") == 0)
		len -= 4;
	for (size_t i = 0; i < len && n + 1 < size; i++) {
		char c = (char)tolower((unsigned char)s[i]);
		if (isalnum((unsigned char)c) && isascii((unsigned char)c))
			out[n++] = c;
		else if (n > 0 && out[n - 1] != '-')
			out[n++] = '-';
	}
	while (n > 0 && out[n - 1] == '-')
		n--;
	out[n] = '\0';
	if (!n)
		snprintf(out, size, "profile");
}

/* Text in a YAML comment: one line, no control characters. */
static void comment_text(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, f);
}

/* A double-quoted YAML scalar: backslash, quote and control characters
 * escaped, everything else (UTF-8 included) as is. */
static void q(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void kv(struct kube *k, int ind, const char *key, const char *value)
{
	fprintf(k->f, "%*s%s: ", ind, "", key);
	q(k->f, value);
	fputc('\n', k->f);
}

static void kvf(struct kube *k, int ind, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void kvf(struct kube *k, int ind, const char *key, const char *fmt, ...)
{
	va_list ap;
	fprintf(k->f, "%*s%s: ", ind, "", key);
	va_start(ap, fmt);
	vfprintf(k->f, fmt, ap);
	va_end(ap);
	fputc('\n', k->f);
}

static void list_q(struct kube *k, int ind, const char *key, const char *const *v, size_t n)
{
	fprintf(k->f, "%*s%s: [", ind, "", key);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", k->f);
		q(k->f, v[i]);
	}
	fputs("]\n", k->f);
}

static void labels(struct kube *k, int ind, const char *role)
{
	fprintf(k->f, "%*slabels:\n", ind, "");
	kv(k, ind + 2, "app.kubernetes.io/managed-by", "sbxrun");
	kv(k, ind + 2, "sbxrun.io/profile", k->name);
	kv(k, ind + 2, "sbxrun.io/role", role);
}

static void metadata(struct kube *k, int ind, const char *name, const char *role)
{
	fprintf(k->f, "%*smetadata:\n", ind, "");
	kv(k, ind + 2, "name", name);
	labels(k, ind + 2, role);
}

/* The field securityContext.seccompProfile says it; the older annotation,
 * equal to it as the API server requires, is what podman kube play reads. */
static void seccomp_annotation(struct kube *k, int ind)
{
	_cleanup_free_ char *v = xasprintf("localhost/sbxrun-%s.json", k->name);
	if (k->cfg->seccomp == SBX_OFF)
		return;
	fprintf(k->f, "%*sannotations:\n", ind, "");
	kv(k, ind + 2, "seccomp.security.alpha.kubernetes.io/pod", v);
}

static void hardened(struct kube *k, int ind, int read_only)
{
	fprintf(k->f, "%*ssecurityContext:\n", ind, "");
	kvf(k, ind + 2, "allowPrivilegeEscalation", "false");
	kvf(k, ind + 2, "privileged", "false");
	kvf(k, ind + 2, "readOnlyRootFilesystem", "%s", read_only ? "true" : "false");
	fprintf(k->f, "%*scapabilities:\n", ind + 2, "");
	fprintf(k->f, "%*sdrop: [\"ALL\"]\n", ind + 4, "");
}

static void env_entry(struct kube *k, int ind, const char *name, const char *value)
{
	fprintf(k->f, "%*s- name: ", ind, "");
	q(k->f, name);
	fprintf(k->f, "\n%*svalue: ", ind + 2, "");
	q(k->f, value);
	fputc('\n', k->f);
}

/* The proxy's password, from its Secret. */
static void env_password(struct kube *k, int ind)
{
	_cleanup_free_ char *secret = xasprintf("sbxrun-proxy-%s", k->name);
	fprintf(k->f, "%*s- name: \"%s\"\n", ind, "", PASSWORD_ENV);
	fprintf(k->f, "%*svalueFrom:\n%*ssecretKeyRef:\n", ind + 2, "", ind + 4, "");
	kv(k, ind + 6, "name", secret);
	kv(k, ind + 6, "key", "password");
}

/* A gateway variable's value in the pod, or NULL where the profile names
 * no upstream for it (env.c's for a sandbox). */
static const char *gw_value(const struct kube *k, enum netplan_value v, const char *gosumdb)
{
	switch (v) {
	case NETPLAN_V_GW_NPM: return GATEWAY_NPM_URL;
	case NETPLAN_V_GW_PYPI: return GATEWAY_PYPI_URL;
	case NETPLAN_V_GW_HOST: return GATEWAY_HOST;
	case NETPLAN_V_GW_GO: return gosumdb[0] ? GATEWAY_GO_URL : NULL;
	case NETPLAN_V_GW_GOSUMDB: return gosumdb[0] ? gosumdb : NULL;
	case NETPLAN_V_GW_GOFLAGS: return gosumdb[0] ? "-mod=mod" : NULL;
	case NETPLAN_V_GW_GO_EMPTY: return gosumdb[0] ? "" : NULL;
	case NETPLAN_V_GW_CARGO: return k->np.gw_cargo ? "sparse" : NULL;
	default: return NULL;
	}
}

static void main_env(struct kube *k, int ind)
{
	const struct sbx_config *cfg = k->cfg;
	char gosumdb[1024] = "";
	_cleanup_free_ char *url = xasprintf("http://%s:$(%s)@sbxrun-proxy-%s:%d", AUTH_USER, PASSWORD_ENV,
					     k->name, PROXY_PORT);
	int password = 0;

	if (gateway_go_sumdb(cfg, gosumdb, sizeof(gosumdb)) < 0)
		gosumdb[0] = '\0';
	fprintf(k->f, "%*senv:\n", ind, "");
	for (size_t i = 0; i < k->np.nenv; i++) {
		const struct netplan_var *v = &k->np.env[i];
		if (v->value == NETPLAN_V_PROXY && !password++)
			env_password(k, ind); /* before the URLs that name it */
		if (v->value == NETPLAN_V_MODE)
			env_entry(k, ind, v->name, k->np.mode_name);
		else if (v->value == NETPLAN_V_PROXY)
			env_entry(k, ind, v->name, url);
		else if (v->value == NETPLAN_V_NO_PROXY)
			env_entry(k, ind, v->name, NETPLAN_NO_PROXY);
		else if (gw_value(k, v->value, gosumdb))
			env_entry(k, ind, v->name, gw_value(k, v->value, gosumdb));
	}
	for (size_t i = 0; i < cfg->env.n; i++) {
		const char *eq = strchr(cfg->env.v[i], '=');
		if (!eq) {
			note(k, "env = %s: the caller's value is not known here", cfg->env.v[i]);
			continue;
		}
		_cleanup_free_ char *key = xasprintf("%.*s", (int)(eq - cfg->env.v[i]), cfg->env.v[i]);
		env_entry(k, ind, key, eq + 1);
	}
}

static void resources(struct kube *k, int ind)
{
	const struct sbx_config *cfg = k->cfg;
	char b[32];

	fprintf(k->f, "%*sresources:\n%*slimits:\n", ind, "", ind + 2, "");
	if (cfg->memory) {
		kube_quantity_bytes(cfg->memory, b, sizeof(b));
		kv(k, ind + 4, "memory", b);
	}
	if (cfg->cpus_milli) {
		kube_quantity_cpu(cfg->cpus_milli, b, sizeof(b));
		kv(k, ind + 4, "cpu", b);
	}
	if (cfg->disk) {
		kube_quantity_bytes(cfg->disk, b, sizeof(b));
		kv(k, ind + 4, "ephemeral-storage", b);
	}
}

/* The package tools that read no variable for the gateway (toolconf.h):
 * their files in a ConfigMap, each mounted where the tool reads it (root's
 * HOME), with the sidecar as their proxy and its password from the
 * environment (the Secret's, expanded by the tool). */
enum { TOOL_CARGO, TOOL_MAVEN, TOOL_GRADLE };
static const char *const tool_files[][2] = {
	[TOOL_CARGO] = { "config.toml", "/.cargo/config.toml" },
	[TOOL_MAVEN] = { "settings.xml", POD_HOME "/.m2/settings.xml" },
	[TOOL_GRADLE] = { "sbxrun.gradle", POD_HOME "/.gradle/init.d/sbxrun.gradle" },
};

static int has_tool(const struct kube *k, int t)
{
	return k->np.proxy && (t == TOOL_CARGO ? k->np.gw_cargo : k->cfg->pkg_maven != NULL);
}

static int has_tools(const struct kube *k)
{
	return has_tool(k, TOOL_CARGO) || has_tool(k, TOOL_MAVEN);
}

static void tools_configmap(struct kube *k)
{
	_cleanup_free_ char *name = xasprintf("sbxrun-tools-%s", k->name);
	_cleanup_free_ char *host = xasprintf("sbxrun-proxy-%s", k->name);
	const struct toolconf_proxy p = { host, PROXY_PORT, AUTH_USER, PASSWORD_ENV };

	fprintf(k->f, "apiVersion: v1\nkind: ConfigMap\n");
	metadata(k, 0, name, "job");
	fprintf(k->f, "data:\n");
	if (has_tool(k, TOOL_CARGO))
		kv(k, 2, tool_files[TOOL_CARGO][0], toolconf_cargo_text());
	if (has_tool(k, TOOL_MAVEN)) {
		_cleanup_free_ char *m = toolconf_maven_text(&p), *g = toolconf_gradle_text(&p);
		kv(k, 2, tool_files[TOOL_MAVEN][0], m);
		kv(k, 2, tool_files[TOOL_GRADLE][0], g);
	}
	fprintf(k->f, "---\n");
}

static void tools_mounts(struct kube *k, int ind)
{
	for (int t = TOOL_CARGO; t <= TOOL_GRADLE; t++) {
		if (!has_tool(k, t == TOOL_GRADLE ? TOOL_MAVEN : t))
			continue;
		fprintf(k->f, "%*s- name: \"tools\"\n", ind, "");
		kv(k, ind + 2, "mountPath", tool_files[t][1]);
		kv(k, ind + 2, "subPath", tool_files[t][0]);
		kvf(k, ind + 2, "readOnly", "true");
	}
}

/* Writable directories over the read-only root: the workspace (the quota'd
 * one), and the scratch places programs expect. */
static const char *const scratch[][2] = { { "tmp", "/tmp" }, { "var-tmp", "/var/tmp" },
					  { "home", "/root" } };

static int read_only_root(const struct kube *k)
{
	return !k->np.writable_root;
}

static void main_container(struct kube *k, int ind, const char *const *cmd)
{
	const struct sbx_config *cfg = k->cfg;

	fprintf(k->f, "%*s- name: \"main\"\n", ind, "");
	ind += 2;
	kv(k, ind, "image", k->ref);
	kv(k, ind, "imagePullPolicy", "IfNotPresent");
	size_t n = 0;
	while (cmd && cmd[n])
		n++;
	if (n)
		list_q(k, ind, "command", cmd, n);
	kv(k, ind, "workingDir", cfg->workdir ? cfg->workdir : cfg->workspace);
	main_env(k, ind);
	resources(k, ind);
	hardened(k, ind, read_only_root(k));
	fprintf(k->f, "%*svolumeMounts:\n", ind, "");
	fprintf(k->f, "%*s- name: \"workspace\"\n", ind, "");
	kv(k, ind + 2, "mountPath", cfg->workspace);
	for (size_t i = 0; read_only_root(k) && i < ARRAY_SIZE(scratch); i++) {
		fprintf(k->f, "%*s- name: \"%s\"\n", ind, "", scratch[i][0]);
		kv(k, ind + 2, "mountPath", scratch[i][1]);
	}
	tools_mounts(k, ind);
}

static void volumes(struct kube *k, int ind)
{
	char b[32];
	kube_quantity_bytes(k->cfg->disk, b, sizeof(b));
	fprintf(k->f, "%*svolumes:\n", ind, "");
	fprintf(k->f, "%*s- name: \"workspace\"\n%*semptyDir:\n", ind, "", ind + 2, "");
	if (k->cfg->disk)
		kv(k, ind + 4, "sizeLimit", b);
	for (size_t i = 0; read_only_root(k) && i < ARRAY_SIZE(scratch); i++) {
		fprintf(k->f, "%*s- name: \"%s\"\n%*semptyDir:\n", ind, "", scratch[i][0], ind + 2, "");
		if (k->cfg->disk)
			kv(k, ind + 4, "sizeLimit", b);
	}
	if (has_tools(k)) {
		_cleanup_free_ char *name = xasprintf("sbxrun-tools-%s", k->name);
		fprintf(k->f, "%*s- name: \"tools\"\n%*sconfigMap:\n", ind, "", ind + 2, "");
		kv(k, ind + 4, "name", name);
	}
}

static void pod_spec(struct kube *k, int ind, int with_deadline, const char *const *cmd)
{
	const struct sbx_config *cfg = k->cfg;
	_cleanup_free_ char *sp = xasprintf("sbxrun-%s.json", k->name);

	kv(k, ind, "restartPolicy", "Never");
	if (with_deadline && cfg->timeout_ms)
		kvf(k, ind, "activeDeadlineSeconds", "%llu",
		    (unsigned long long)((cfg->timeout_ms + 999) / 1000));
	kvf(k, ind, "automountServiceAccountToken", "false");
	kvf(k, ind, "enableServiceLinks", "false");
	if (cfg->hostname)
		kv(k, ind, "hostname", cfg->hostname);
	fprintf(k->f, "%*ssecurityContext:\n", ind, "");
	if (cfg->seccomp != SBX_OFF) {
		fprintf(k->f, "%*sseccompProfile:\n", ind + 2, "");
		kv(k, ind + 4, "type", "Localhost");
		kv(k, ind + 4, "localhostProfile", sp);
	} else {
		fprintf(k->f, "%*sseccompProfile:\n", ind + 2, "");
		kv(k, ind + 4, "type", "Unconfined");
	}
	if (cfg->user && strspn(cfg->user, "0123456789") == strlen(cfg->user))
		kvf(k, ind + 2, "runAsUser", "%s", cfg->user);
	fprintf(k->f, "%*scontainers:\n", ind, "");
	main_container(k, ind, cmd);
	volumes(k, ind);
}

static void workload(struct kube *k, const char *const *cmd)
{
	_cleanup_free_ char *name = xasprintf("sbxrun-%s", k->name);

	if (k->cfg->kube_kind == SBX_KUBE_POD) {
		fprintf(k->f, "apiVersion: v1\nkind: Pod\n");
		metadata(k, 0, name, "job");
		seccomp_annotation(k, 2);
		fprintf(k->f, "spec:\n");
		pod_spec(k, 2, 1, cmd);
		return;
	}
	fprintf(k->f, "apiVersion: batch/v1\nkind: Job\n");
	metadata(k, 0, name, "job");
	fprintf(k->f, "spec:\n");
	kvf(k, 2, "backoffLimit", "0");
	if (k->cfg->timeout_ms)
		kvf(k, 2, "activeDeadlineSeconds", "%llu",
		    (unsigned long long)((k->cfg->timeout_ms + 999) / 1000));
	fprintf(k->f, "  template:\n");
	fprintf(k->f, "    metadata:\n");
	labels(k, 6, "job");
	seccomp_annotation(k, 6);
	fprintf(k->f, "    spec:\n");
	pod_spec(k, 6, 0, cmd);
}

/* key: {matchLabels: ...}; as a list item ("- podSelector") its body is
 * indented under the key, past the dash. */
static void selector(struct kube *k, int ind, const char *key, const char *role)
{
	int body = ind + (key[0] == '-' ? 4 : 2);
	fprintf(k->f, "%*s%s:\n%*smatchLabels:\n", ind, "", key, body, "");
	kv(k, body + 2, "sbxrun.io/profile", k->name);
	kv(k, body + 2, "sbxrun.io/role", role);
}

/* Egress to the cluster's DNS (the proxy's Service name must resolve). */
static void dns_rule(struct kube *k, int ind)
{
	fprintf(k->f, "%*s- to:\n%*s- namespaceSelector: {}\n", ind, "", ind + 2, "");
	fprintf(k->f, "%*spodSelector:\n%*smatchLabels:\n", ind + 4, "", ind + 6, "");
	kv(k, ind + 8, "k8s-app", "kube-dns");
	fprintf(k->f, "%*sports:\n", ind + 2, "");
	fprintf(k->f, "%*s- {protocol: \"UDP\", port: 53}\n%*s- {protocol: \"TCP\", port: 53}\n",
		ind + 2, "", ind + 2, "");
}

static void policy_head(struct kube *k, const char *suffix, const char *role, const char *types)
{
	_cleanup_free_ char *name = xasprintf("sbxrun-%s-%s", k->name, suffix);
	fprintf(k->f, "---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n");
	metadata(k, 0, name, "policy");
	fprintf(k->f, "spec:\n");
	selector(k, 2, "podSelector", role);
	fprintf(k->f, "  policyTypes: %s\n", types);
}

static void network_policies(struct kube *k)
{
	if (!k->np.own_netns)
		return;
	policy_head(k, "egress", "job", "[\"Egress\"]");
	if (!k->np.proxy) {
		fprintf(k->f, "  egress: []\n");
		return;
	}
	/* packages: the job reaches the proxy's port and DNS, nothing else */
	fprintf(k->f, "  egress:\n  - to:\n");
	selector(k, 4, "- podSelector", "proxy");
	fprintf(k->f, "    ports:\n    - {protocol: \"TCP\", port: %d}\n", PROXY_PORT);
	dns_rule(k, 2);
	/* the proxy: in from the job only; out to web ports and DNS (its own
	 * allow list and address guard decide the rest) */
	policy_head(k, "proxy", "proxy", "[\"Ingress\", \"Egress\"]");
	fprintf(k->f, "  ingress:\n  - from:\n");
	selector(k, 4, "- podSelector", "job");
	fprintf(k->f, "    ports:\n    - {protocol: \"TCP\", port: %d}\n", PROXY_PORT);
	fprintf(k->f, "  egress:\n  - ports:\n    - {protocol: \"TCP\", port: 80}\n"
		      "    - {protocol: \"TCP\", port: 443}\n");
	dns_rule(k, 2);
}

/* The proxy's password: 128 random bits in hex (safe inside a URL). */
static int proxy_secret(struct kube *k, struct sbx_err *err)
{
	_cleanup_free_ char *name = xasprintf("sbxrun-proxy-%s", k->name);
	unsigned char r[16];
	char hex[sizeof(r) * 2 + 1];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return err_sys(err, "kube export: getrandom");
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(hex + 2 * i, 3, "%02x", r[i]);
	fprintf(k->f, "apiVersion: v1\nkind: Secret\n");
	metadata(k, 0, name, "proxy");
	fprintf(k->f, "type: \"Opaque\"\nstringData:\n");
	kv(k, 2, "password", hex);
	fprintf(k->f, "---\n");
	explicit_bzero(hex, sizeof(hex));
	return 0;
}

/* The package cache's emptyDir: [packages] cache_max and a margin, or no
 * limit when the cap is unlimited (a note says so). The gateway keeps the
 * cap by evicting the least recently used once a download is committed
 * or an index document is written (down to 90 % of it), so beside what
 * the cap counts (artifacts, index documents, Packages tables) the volume
 * holds the temporary files of downloads in flight (up to 48 at once) and
 * the file whose commit crossed the cap. The margin for them is a tenth of
 * the cap, at least 1Gi, rounded up to a MiB. Past sizeLimit the kubelet evicts the
 * proxy's pod (its cache goes with it) rather than fill the node's disk. */
uint64_t kube_cache_limit(uint64_t cache_max)
{
	uint64_t slack = cache_max / 10 > CACHE_SLACK_MIN ? cache_max / 10 : CACHE_SLACK_MIN;
	uint64_t mib = 1ULL << 20;

	return cache_max ? (cache_max + slack + mib - 1) / mib * mib : 0;
}

static void cache_volume(struct kube *k)
{
	char b[32];
	uint64_t limit = kube_cache_limit(k->cfg->pkg_cache_max);

	fprintf(k->f, "      - name: \"package-cache\"\n");
	if (!limit) {
		fprintf(k->f, "        emptyDir: {}\n");
		return;
	}
	kube_quantity_bytes(limit, b, sizeof(b));
	fprintf(k->f, "        emptyDir:\n");
	kv(k, 10, "sizeLimit", b);
}

static void proxy_objects(struct kube *k)
{
	_cleanup_free_ char *name = xasprintf("sbxrun-proxy-%s", k->name);
	_cleanup_free_ char *listen = xasprintf("0.0.0.0:%d", PROXY_PORT);
	char cap[32];
	format_size(k->cfg->pkg_cache_max, cap, sizeof(cap)); /* what --cache-max reads */
	const char *cmd[] = { "sbxrun", "proxy", "--listen", listen, "--profile", k->cfg->profile,
			      "--image", k->cfg->image, "--auth-file", AUTH_DIR "/password",
			      "--cache-max", cap };

	fprintf(k->f, "---\napiVersion: apps/v1\nkind: Deployment\n");
	metadata(k, 0, name, "proxy");
	fprintf(k->f, "spec:\n  replicas: 1\n");
	selector(k, 2, "selector", "proxy");
	fprintf(k->f, "  template:\n    metadata:\n");
	labels(k, 6, "proxy");
	fprintf(k->f, "    spec:\n");
	kvf(k, 6, "automountServiceAccountToken", "false");
	fprintf(k->f, "      securityContext:\n        seccompProfile:\n          type: \"RuntimeDefault\"\n");
	fprintf(k->f, "      containers:\n      - name: \"proxy\"\n");
	kv(k, 8, "image", PROXY_IMAGE);
	list_q(k, 8, "command", cmd, ARRAY_SIZE(cmd));
	fprintf(k->f, "        ports:\n        - {containerPort: %d, protocol: \"TCP\"}\n", PROXY_PORT);
	/* the gateway's cache: the root stays read-only */
	fprintf(k->f, "        env:\n");
	env_entry(k, 8, "XDG_CACHE_HOME", CACHE_DIR);
	/* the gateway holds an index document (up to 48 MiB) while it reads it */
	fprintf(k->f, "        resources:\n          limits:\n"
		      "            memory: \"512Mi\"\n            cpu: \"500m\"\n");
	hardened(k, 8, 1);
	fprintf(k->f, "        volumeMounts:\n        - name: \"proxy-auth\"\n");
	kv(k, 10, "mountPath", AUTH_DIR);
	kvf(k, 10, "readOnly", "true");
	fprintf(k->f, "        - name: \"package-cache\"\n");
	kv(k, 10, "mountPath", CACHE_DIR);
	fprintf(k->f, "      volumes:\n      - name: \"proxy-auth\"\n        secret:\n");
	kv(k, 10, "secretName", name);
	cache_volume(k);
	fprintf(k->f, "---\napiVersion: v1\nkind: Service\n");
	metadata(k, 0, name, "proxy");
	fprintf(k->f, "spec:\n");
	fprintf(k->f, "  selector:\n");
	kv(k, 4, "sbxrun.io/profile", k->name);
	kv(k, 4, "sbxrun.io/role", "proxy");
	fprintf(k->f, "  ports:\n  - {protocol: \"TCP\", port: %d, targetPort: %d}\n", PROXY_PORT,
		PROXY_PORT);
}

/* Profile settings with no Kubernetes equivalent. */
static void collect_notes(struct kube *k)
{
	const struct sbx_config *cfg = k->cfg;
	char b[32];

	if (cfg->pids)
		note(k, "pids = %llu: a pod's process limit is the kubelet's podPidsLimit, not part of the pod spec",
		     (unsigned long long)cfg->pids);
	if (cfg->file_size)
		note(k, "file_size: Kubernetes sets no per-container rlimits");
	if (cfg->open_files)
		note(k, "open_files: Kubernetes sets no per-container rlimits");
	if (cfg->idle_ms || cfg->lifetime_ms)
		note(k, "idle/lifetime: session settings; a Job ends with its command");
	for (size_t i = 0; i < cfg->binds.n; i++)
		note(k, "bind = %s: host paths are not exported (use a volume)", cfg->binds.v[i]);
	if (cfg->user && strspn(cfg->user, "0123456789") != strlen(cfg->user))
		note(k, "user = %s: give its uid as runAsUser", cfg->user);
	if (cfg->user && strcmp(cfg->user, "root") && strcmp(cfg->user, "0") && has_tools(k))
		note(k, "user = %s: Maven's settings and Gradle's init script are mounted in root's HOME, " POD_HOME,
		     cfg->user);
	if (cfg->storage == SBX_STORAGE_TMPFS && cfg->disk) {
		kube_quantity_bytes(cfg->disk, b, sizeof(b));
		note(k, "storage = tmpfs: the writable directories are emptyDirs on the node's disk, limited to %s by ephemeral-storage", b);
	}
	if (cfg->seccomp == SBX_OFF)
		note(k, "seccomp = off: the pod runs Unconfined");
	if (k->np.writable_root)
		note(k, "egress = %s: the root file system stays writable (package installs), counted in ephemeral-storage",
		     k->np.mode_name);
	if (k->np.proxy && !cfg->pkg_cache_max)
		note(k, "cache_max = unlimited: the proxy's package cache (an emptyDir) has no size limit");
	if (k->np.own_netns)
		note(k, "egress = %s: the NetworkPolicy needs a network plugin that enforces policies (podman does not)",
		     k->np.mode_name);
}

static void header(struct kube *k)
{
	fprintf(k->f, "# Kubernetes objects for the sbxrun profile ");
	q(k->f, k->cfg->profile);
	fprintf(k->f, " (sbxrun profile export --format kube).\n");
	fprintf(k->f, "# The seccomp profile: sbxrun profile export ");
	comment_text(k->f, k->cfg->profile);
	fprintf(k->f, " --format seccomp,\n");
	fprintf(k->f, "# installed as <kubelet seccomp root>/sbxrun-%s.json on every node.\n", k->name);
	if (k->np.proxy) {
		fprintf(k->f, "# The proxy image (%s) holds sbxrun with this profile and image.\n", PROXY_IMAGE);
		fprintf(k->f, "# Its password (Secret sbxrun-proxy-%s, made at export time) is read by the\n"
			      "# proxy from a mounted file and sent by the job in its proxy URLs.\n", k->name);
	}
	if (k->notes->n)
		fprintf(k->f, "# Not expressed in Kubernetes:\n");
	for (size_t i = 0; i < k->notes->n; i++) {
		fprintf(k->f, "# - ");
		comment_text(k->f, k->notes->v[i]);
		fputc('\n', k->f);
	}
}

int kube_yaml(const struct sbx_config *cfg, const char *const *cmd, char **out,
	      struct kube_notes *notes, struct sbx_err *err)
{
	size_t len;
	_cleanup_free_ char *ref = cfg->image_ref ? NULL : xasprintf("localhost/%s:latest", cfg->image);
	struct kube k = { .cfg = cfg, .ref = cfg->image_ref ? cfg->image_ref : ref, .notes = notes };

	kube_name(cfg->profile, k.name, sizeof(k.name));
	netplan_derive(cfg, NETPLAN_POD, &k.np);
	if (!k.ref[0] || strpbrk(k.ref, " \t\n\r\"\\"))
		return err_set(err, 0, "--image-ref: '%s' is not an image reference", k.ref);
	collect_notes(&k);
	*out = NULL;
	k.f = open_memstream(out, &len);
	if (!k.f)
		return err_sys(err, "kube export");
	header(&k);
	if (k.np.proxy && proxy_secret(&k, err) < 0) {
		fclose(k.f);
		free(steal_ptr(*out));
		return -1;
	}
	if (has_tools(&k))
		tools_configmap(&k);
	workload(&k, cmd);
	network_policies(&k);
	if (k.np.proxy)
		proxy_objects(&k);
	if (fclose(k.f) != 0)
		return err_sys(err, "kube export");
	return 0;
}
