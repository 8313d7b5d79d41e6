/* proxy_cmd.c - `sbxrun proxy --listen ADDR --profile NAME [--image NAME]`:
 * the egress proxy of `packages` (net/proxy.c: the profile's allow list with
 * the image's @apt/@npm/@pypi sets, the address guard, events) served on a
 * TCP address instead of a sandbox's door, until SIGTERM or SIGINT. This is
 * the proxy a pod exported with `profile export --format kube` talks to. */
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
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "net/proxy.h"
#include "store/store.h"

static const char usage[] =
	"usage: sbxrun proxy --listen ADDR:PORT [--profile NAME] [--image NAME] [--allow HOST]...\n"
	"Serves the egress proxy of a 'packages' profile on a TCP address (IPv4, or\n"
	"IPv6 in brackets; port 0 picks one) until SIGTERM or SIGINT.\n";

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

static void say_where(int fd, const char *profile)
{
	struct sockaddr_storage ss;
	socklen_t n = sizeof(ss);
	char host[INET6_ADDRSTRLEN + 2], port[8];

	if (getsockname(fd, (struct sockaddr *)&ss, &n) == 0 &&
	    getnameinfo((struct sockaddr *)&ss, n, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		log_info("proxy for profile '%s' listening on %s%s%s:%s", profile,
			 ss.ss_family == AF_INET6 ? "[" : "", host, ss.ss_family == AF_INET6 ? "]" : "",
			 port);
}

/* The signals are blocked before the proxy starts its resolver threads,
 * which inherit the mask: SIGTERM must reach the signalfd, not a thread. */
static int serve(struct sbx_proxy *px, const sigset_t *set, struct sbx_err *err)
{
	_cleanup_close_ int sfd = signalfd(-1, set, SFD_CLOEXEC);
	if (sfd < 0)
		return err_sys(err, "signalfd");
	struct pollfd p[2] = { { .fd = sfd, .events = POLLIN }, { .fd = proxy_pollfd(px), .events = POLLIN } };
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return err_sys(err, "poll");
		}
		if (p[0].revents)
			return 0;
		if (p[1].revents && proxy_dispatch(px) < 0)
			return err_sys(err, "proxy");
	}
}

static int run_proxy(const struct sbx_config *cfg, struct sbx_err *err)
{
	struct sbx_image img;
	struct sbx_proxy *px = NULL;

	if (!cfg->listen)
		return err_set(err, 0, "proxy: --listen ADDR:PORT is required");
	if (cfg->egress != SBX_EGRESS_PACKAGES)
		return err_set(err, 0, "profile '%s': egress is '%s'; the proxy serves 'packages'",
			       cfg->profile, sbx_egress_names[cfg->egress]);
	_cleanup_close_ int lfd = listen_socket(cfg->listen, err);
	if (lfd < 0)
		return -1;
	_cleanup_close_ int events = cfg->events_file
		? open(cfg->events_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644) : -1;
	if (cfg->events_file && events < 0)
		return err_sys(err, "--events '%s'", cfg->events_file);
	if (store_image_open(cfg->image, &img, err) < 0)
		return -1;
	struct sbx_proxy_conf conf = {
		.profile_name = cfg->profile, .allow = &cfg->allow, /* the sets by default (cli.c) */
		.apt_hosts = (const char *const *)img.apt_hosts, .npm_registry = img.npm_registry,
		.pypi_index = img.pypi_index, .events_fd = events,
	};
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	say_where(lfd, cfg->profile);
	int r = proxy_new(&conf, steal_fd(lfd), &px, err);
	if (r == 0) {
		r = serve(px, &set, err);
		proxy_free(px);
	}
	store_image_close(&img);
	return r;
}

int cmd_proxy(int argc, char **argv, struct sbx_err *err)
{
	struct sbx_config cfg;
	int rest, r = cli_sandbox_config(argc, argv, SBX_CMD_PROXY, usage, &cfg, &rest, err);

	if (r == 0 && rest != argc)
		r = err_set(err, 0, "proxy: unexpected argument '%s'", argv[rest]);
	if (r == 0)
		r = run_proxy(&cfg, err);
	config_free(&cfg);
	return r < 0 ? -1 : 0;
}
