/* fuzz_proxy.c - libFuzzer harness for the proxy's loop under many
 * connections: the input is a script of records [op][len][bytes...] that
 * open, feed, half-close and close up to 16 client connections (on a unix
 * listening socket, so no port runs out) in any interleaving, with the real
 * proxy_dispatch run between records. Two proxies, chosen by the first
 * byte: one with a per-peer cap below its total (every unix peer is one
 * peer), one with a total cap alone, so both ways of shedding run. The
 * allow list names only host.sbxrun.internal:1, which refuses at once:
 * nothing is looked up or leaves the machine. At the end every connection
 * is closed and the proxy must have let go of all of them. */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/util.h"
#include "net/proxy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SLOTS 16

struct rig {
	struct sbx_proxy *p;
	struct sockaddr_un addr;
};

static struct rig rigs[2];

static void rig_init(struct rig *r, int which)
{
	static char *pats[] = { "host.sbxrun.internal:1" };
	static const struct sbx_strlist allow = { pats, NULL, 1 };
	struct sbx_proxy_conf conf = { .profile_name = "fuzz", .allow = &allow, .events_fd = -1,
				       .max_conns = which ? 4 : 8, .max_per_peer = which ? 0 : 3,
				       .head_timeout_ms = 100, .auth = which ? NULL : "u:pw" };
	struct sbx_err err;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	r->addr.sun_family = AF_UNIX;
	/* abstract: nothing left on disk */
	snprintf(r->addr.sun_path + 1, sizeof(r->addr.sun_path) - 1, "sbxrun-fuzz-proxy-%d-%d", getpid(), which);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(r->addr.sun_path + 1));
	if (fd < 0 || bind(fd, (struct sockaddr *)&r->addr, len) < 0 || listen(fd, 64) < 0 ||
	    proxy_new(&conf, fd, &r->p, &err) < 0)
		abort();
}

static int dial(struct rig *r)
{
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(r->addr.sun_path + 1));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&r->addr, len) < 0)
		abort();
	return fd;
}

/* Reads whatever the proxy answered, so its sends never block. */
static void drain(int fd)
{
	char buf[4096];
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

static void settle(struct rig *r, int rounds)
{
	struct pollfd pfd = { .fd = proxy_pollfd(r->p), .events = POLLIN };
	for (int i = 0; i < rounds; i++) {
		if (proxy_dispatch(r->p) < 0)
			abort();
		if (poll(&pfd, 1, 0) <= 0)
			break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fds[SLOTS];
	struct sbx_proxy_counters before, after;

	if (!rigs[0].p) {
		unsetenv("https_proxy");
		unsetenv("HTTPS_PROXY");
		unsetenv("http_proxy");
		unsetenv("HTTP_PROXY");
		rig_init(&rigs[0], 0);
		rig_init(&rigs[1], 1);
	}
	if (size == 0)
		return 0;
	struct rig *r = &rigs[data[0] & 1];
	proxy_counters(r->p, &before);
	for (int i = 0; i < SLOTS; i++)
		fds[i] = -1;
	for (size_t at = 1; at + 2 <= size;) {
		unsigned op = data[at] >> 4, slot = data[at] & (SLOTS - 1);
		size_t len = data[at + 1];
		at += 2;
		if (len > size - at)
			len = size - at;
		if (fds[slot] < 0 && op != 3)
			fds[slot] = dial(r);
		if (op == 1) {
			shutdown(fds[slot], SHUT_WR);
		} else if (op == 2 || op == 3) {
			if (fds[slot] >= 0)
				close(fds[slot]);
			fds[slot] = -1;
		} else {
			(void)!send(fds[slot], data + at, len, MSG_DONTWAIT | MSG_NOSIGNAL);
			at += len;
		}
		settle(r, 4);
		for (int i = 0; i < SLOTS; i++)
			if (fds[i] >= 0)
				drain(fds[i]);
	}
	for (int i = 0; i < SLOTS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	settle(r, 64);
	proxy_counters(r->p, &after);
	/* host.sbxrun.internal:1 refuses: nothing can have been relayed */
	if (after.allowed != before.allowed || after.bytes_up != before.bytes_up)
		abort();
	if (after.open != 0)
		abort();
	return 0;
}
