/* proxy_cmd.c - `sbxrun proxy --listen ADDR --profile NAME [--image NAME]`:
 * the egress proxy of `packages` (net/proxy.c: the profile's allow list with
 * the image's @apt/@npm/@pypi sets, the address guard, events) and behind it
 * the package gateway (gateway/gateway.c: the profile's [packages] rules,
 * the user's cache and the system cache), made as a sandbox's are, served
 * on a TCP address instead of a sandbox's door, until SIGTERM or SIGINT.
 * This is the proxy a pod exported with `profile export --format kube`
 * talks to. A network peer gets no more than the allow list and the
 * gateway, within per-peer limits that count both, and only with the
 * shared secret when one is set (--auth-file, or SBXRUN_PROXY_AUTH; never
 * an argument, which ps shows to everyone).
 *
 * The gateway's endpoints are the ones a sandbox uses,
 * http://packages.sbxrun.internal/npm/, /pypi/simple/ (and apt's own plain
 * HTTP for the image's @apt hosts), asked for as absolute URIs through
 * this proxy: a peer sets the registry variables a sandbox gets and its
 * proxy setting, nothing resolves that name, and the links the gateway
 * writes into index documents name it too. No second, origin-form door:
 * one name and one path for npm, pip and apt, the secret in the one header
 * every client sends its proxy (Proxy-Authorization). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hostfile.h"
#include "base/log.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/gateway.h"
#include "net/netplan.h"
#include "sandbox/plan.h"
#include "net/proxy.h"
#include "net/proxy_auth.h"
#include "sandbox/liverules.h"
#include "store/import.h"
#include "store/store.h"

static const char usage[] =
	"usage: sbxrun proxy --listen ADDR:PORT [--profile NAME] [--image NAME] [--allow HOST]...\n"
	"                    [--auth-file FILE] [--header-timeout DURATION]\n"
	"                    [--unread-max SIZE] [--answer-timeout DURATION]\n"
	"Serves the egress proxy of a 'packages' profile and its package gateway\n"
	"(http://packages.sbxrun.internal/npm/ and /pypi/simple/, asked through this\n"
	"proxy; the profile's [packages] rules and cache) on a TCP address (IPv4, or\n"
	"IPv6 in brackets; port 0 picks one) until SIGTERM or SIGINT. With\n"
	"--auth-file (or SBXRUN_PROXY_AUTH) clients must send that secret as\n"
	"Proxy-Authorization (http://USER:PASSWORD@ADDR:PORT).\n";

/* Connections per source address (an IPv6 /64), and at most in all. */
#define PER_PEER 64
#define MOST_CONNS 512
#define AUTH_ENV "SBXRUN_PROXY_AUTH"

/* The secret: the file's first line (a Kubernetes Secret mounted as a file
 * is a symlink into ..data/, so links are followed), or the variable. */
static int read_secret(const char *path, char **out, struct sbx_err *err)
{
	char buf[PROXY_AUTH_MAX + 4];
	const char *env = getenv(AUTH_ENV);
	ssize_t n;

	*out = NULL;
	if (!path) {
		if (!env || !*env)
			return 0;
		if (proxy_auth_valid(env, AUTH_ENV, err) < 0)
			return -1;
		*out = xstrdup(env);
		return 0;
	}
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return err_sys(err, "--auth-file '%s'", path);
	if (!S_ISREG(st.st_mode))
		return err_set(err, 0, "--auth-file '%s': not a regular file", path);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return err_sys(err, "--auth-file '%s'", path);
	buf[n] = 0;
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = 0;
	if (n > 0 && buf[n - 1] == '\r')
		buf[--n] = 0;
	_cleanup_free_ char *what = xasprintf("--auth-file '%s'", path);
	int r = (size_t)n != strlen(buf) ? err_set(err, 0, "%s: NUL byte in the secret", what)
		: proxy_auth_valid(buf, what, err);
	if (r == 0)
		*out = xstrdup(buf);
	explicit_bzero(buf, sizeof(buf));
	return r;
}

/* Each relayed connection holds six fds: as many connections as the fd
 * limit (raised to its hard limit) allows, up to MOST_CONNS. The gateway's
 * clients (at most 256, a socket, a file and a lock each) get a quarter of
 * the limit, up to what they can use. */
static unsigned conn_budget(int gateway)
{
	struct rlimit rl;
	rlim_t reserve;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 128;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	reserve = !gateway ? 0 : rl.rlim_cur / 4 < 3 * 256 ? rl.rlim_cur / 4 : 3 * 256;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= 64 + reserve + 6 * MOST_CONNS)
		return MOST_CONNS;
	return rl.rlim_cur > 64 + reserve + 6 * 16 ? (unsigned)((rl.rlim_cur - 64 - reserve) / 6) : 16;
}

/* "1.2.3.4:80" or "[::1]:80", numeric only: a listen address is no name. */
static int listen_socket(const char *spec, struct sbx_err *err)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
				  .ai_socktype = SOCK_STREAM }, *ai = NULL;
	uint64_t port;
	struct sbx_err perr;

	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(host) ||
	    parse_count(colon + 1, 0, 65535, &port, &perr) < 0)
		return err_set(err, 0, "--listen: '%s' is not ADDR:PORT (e.g. 127.0.0.1:3128)", spec);
	snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
	if (host[0] == '[') {
		size_t n = strlen(host);
		if (n < 3 || host[n - 1] != ']')
			return err_set(err, 0, "--listen: '%s' is not ADDR:PORT", spec);
		memmove(host, host + 1, n - 2);
		host[n - 2] = '\0';
	} else if (strchr(host, ':')) {
		return err_set(err, 0, "--listen: '%s': write an IPv6 address in brackets", spec);
	}
	if (getaddrinfo(host, colon + 1, &hints, &ai) != 0 || !ai)
		return err_set(err, 0, "--listen: '%s' is not a numeric address and port", spec);
	int one = 1, fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0) {
		int e = errno;
		freeaddrinfo(ai);
		if (fd >= 0)
			close(fd);
		return err_set(err, e, "--listen '%s'", spec);
	}
	freeaddrinfo(ai);
	return fd;
}

static void say_where(int fd, const char *profile, int auth, int gateway)
{
	struct sockaddr_storage ss;
	socklen_t n = sizeof(ss);
	char host[INET6_ADDRSTRLEN + 2], port[8];

	if (getsockname(fd, (struct sockaddr *)&ss, &n) == 0 &&
	    getnameinfo((struct sockaddr *)&ss, n, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		log_info("proxy for profile '%s' listening on %s%s%s:%s%s%s", profile,
			 ss.ss_family == AF_INET6 ? "[" : "", host, ss.ss_family == AF_INET6 ? "]" : "",
			 port, gateway ? ", with the package gateway" : "",
			 auth ? " (credentials required)" : "");
}

/* The signals are blocked before the proxy starts its resolver threads,
 * which inherit the mask: SIGTERM must reach the signalfd, not a thread. */
static int serve(struct sbx_proxy *px, struct sbx_liverules *live, const sigset_t *set, struct sbx_err *err)
{
	_cleanup_close_ int sfd = signalfd(-1, set, SFD_CLOEXEC);
	if (sfd < 0)
		return err_sys(err, "signalfd");
	/* policy.ini, $SBXRUN_POLICY and the profile, read again when they
	 * change (sandbox/liverules.c) */
	struct pollfd p[3] = { { .fd = sfd, .events = POLLIN }, { .fd = proxy_pollfd(px), .events = POLLIN },
			       { .fd = liverules_fd(live), .events = POLLIN } };
	for (;;) {
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return err_sys(err, "poll");
		}
		if (p[0].revents)
			return 0;
		if (p[1].revents && proxy_dispatch(px) < 0)
			return err_sys(err, "proxy");
		if (p[2].revents)
			liverules_changed(live);
	}
}

/* The proxy and its gateway on lfd, served until a signal of set. */
static int serve_proxy(const struct sbx_config *cfg, const struct sbx_image *img, struct sbx_netplan *np,
		       int lfd, int events, const char *secret, const sigset_t *set, struct sbx_err *err)
{
	struct hostmatch_sets sets = plan_image_sets(img);
	struct sbx_proxy_conf conf = {
		.profile_name = cfg->profile, .hosts = &np->hosts, .events_fd = events,
		.max_per_peer = PER_PEER, .head_timeout_ms = (unsigned)cfg->header_timeout_ms,
		.auth = secret,
	};
	struct sbx_gateway_conf gc;
	_cleanup_free_ char *pypi = NULL;
	struct sbx_proxy *px = NULL;
	struct sbx_policy pol = { 0 };

	if (netplan_expand(np, &sets, err) < 0)
		return -1;
	/* the ceiling the proxy holds, so that a change is measured against it */
	conf.sets = sets;
	if (policy_load(&pol, err) < 0)
		return -1;
	conf.policy = &pol;
	/* the gateway a sandbox of this profile and image would have */
	gateway_conf_init(&gc, cfg, &sets, &pypi);
	gc.profile_name = cfg->profile;
	gc.sets = &sets;
	gc.events_fd = events;
	gc.held_max = cfg->unread_max;
	gc.peer_share = true;
	gc.answer_ms = cfg->answer_timeout_ms;
	if (gateway_local_for(&gc, &conf.local, err) < 0) {
		policy_free(&pol);
		return -1;
	}
	conf.max_conns = conn_budget(conf.local.host != NULL);
	int fd = dup(lfd);
	if (fd < 0) {
		if (conf.local.host)
			conf.local.free(conf.local.ctx);
		policy_free(&pol);
		return err_sys(err, "dup");
	}
	int made = proxy_new(&conf, fd, &px, err);
	policy_free(&pol);
	if (made < 0)
		return -1;
	say_where(lfd, cfg->profile, secret != NULL, conf.local.host != NULL);
	struct sbx_liverules live;
	liverules_start(&live, cfg, NETPLAN_PROXY, &sets, px);
	int r = serve(px, &live, set, err);
	liverules_free(&live);
	proxy_free(px);
	return r;
}

static int run_proxy(const struct sbx_config *cfg, struct sbx_err *err)
{
	struct sbx_image img;
	struct sbx_netplan np;

	if (!cfg->listen)
		return err_set(err, 0, "proxy: --listen ADDR:PORT is required");
	netplan_derive(cfg, NETPLAN_PROXY, &np);
	if (!np.proxy)
		return err_set(err, 0, "profile '%s': egress is '%s'; the proxy serves 'packages'",
			       cfg->profile, np.mode_name);
	if (cfg->origin[SBX_K_HEADER_TIMEOUT] &&
	    (cfg->header_timeout_ms < 100 || cfg->header_timeout_ms > 600000))
		return err_set(err, 0, "--header-timeout: %llums is not between 100ms and 10m",
			       (unsigned long long)cfg->header_timeout_ms);
	if (cfg->origin[SBX_K_UNREAD_MAX] && (cfg->unread_max < (1U << 20) || cfg->unread_max > (1ULL << 40)))
		return err_set(err, 0, "--unread-max: %llu bytes is not between 1M and 1T",
			       (unsigned long long)cfg->unread_max);
	if (cfg->origin[SBX_K_ANSWER_TIMEOUT] &&
	    (cfg->answer_timeout_ms < 1000 || cfg->answer_timeout_ms > 86400000))
		return err_set(err, 0, "--answer-timeout: %llums is not between 1s and 24h",
			       (unsigned long long)cfg->answer_timeout_ms);
	_cleanup_free_ char *secret = NULL;
	if (read_secret(cfg->auth_file, &secret, err) < 0)
		return -1;
	_cleanup_close_ int lfd = listen_socket(cfg->listen, err);
	if (lfd < 0)
		return -1;
	_cleanup_close_ int events = cfg->events_file ? hostfile_open_append(cfg->events_file, "--events", err) : -1;
	if (cfg->events_file && events < 0)
		return -1;
	if (import_image_open(cfg->image, &img, err) < 0)
		return -1;
	/* before the resolver's and libcurl's threads, which inherit the mask:
	 * SIGTERM must reach the signalfd, not a thread */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int r = serve_proxy(cfg, &img, &np, lfd, events, secret, &set, err);
	store_image_close(&img);
	netplan_free(&np);
	if (secret)
		explicit_bzero(secret, strlen(secret));
	return r;
}

int cmd_proxy(int argc, char **argv, struct sbx_err *err)
{
	struct sbx_config cfg;
	int rest, r = cli_sandbox_config(argc, argv, SBX_CMD_PROXY, usage, &cfg, &rest, err);

	if (r == 0 && rest != argc)
		r = err_set(err, 0, "proxy: unexpected argument '%s'", argv[rest]);
	/* its clients are not sandboxes whose variables it sets */
	if (r == 0 && cfg.creds.n)
		r = err_set(err, 0, "%s: [credentials] are brokered by a sandbox's own proxy, not by sbxrun proxy",
			    cfg.creds.origin[0]);
	if (r == 0)
		r = run_proxy(&cfg, err);
	config_free(&cfg);
	return r < 0 ? -1 : 0;
}
