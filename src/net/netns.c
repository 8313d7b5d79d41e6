/* netns.c - an empty network namespace with only lo up: every connect
 * elsewhere fails with ENETUNREACH, as in the hosted containers. The
 * sockets the host side serves inside (the proxy's door, the DNS stub's)
 * are made here, in the sandbox's namespace, and handed over. */
#define _GNU_SOURCE
#include "net/netns.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/ipv6.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/util.h"

int netns_loopback_up(struct sbx_err *err)
{
	struct ifreq ifr;
	_cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return err_sys(err, "socket for lo");
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return err_sys(err, "get flags of lo");
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		return err_sys(err, "bring lo up");
	return 0;
}

/* Connections to the door wait in its backlog while the proxy is full
 * (proxy.h, queue_when_full): npm 9 opens one for each of its hundreds of
 * requests at once. A connection the backlog cannot take never gets its
 * SYN answered and retries; one answered but left out when it filled is
 * reset, so the backlog is as deep as the kernel allows (net.core.somaxconn
 * of the sandbox's namespace, 4096 since Linux 5.4). It costs the host
 * nothing the sandbox could not spend on its own loopback. */
#define DOOR_BACKLOG 4096

int netns_proxy_door(struct sbx_err *err)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(SBX_PROXY_PORT) };
	int one = 1;
	_cleanup_close_ int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	inet_pton(AF_INET, SBX_PROXY_ADDR, &a.sin_addr);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, DOOR_BACKLOG) < 0)
		return err_sys(err, "the proxy's socket on %s:%d", SBX_PROXY_ADDR, SBX_PROXY_PORT);
	return steal_fd(s);
}

/* glibc's getaddrinfo with AI_ADDRCONFIG answers nothing for a family that
 * has no address but loopback (`getent ahostsv4`, Node's family 4): the
 * stub's addresses on lo count as configured, as an eth0 would in the
 * hosted containers, and add no route. IPv6 may be disabled: then v4 only. */
static int add_stub_addresses(struct sbx_err *err)
{
	struct ifreq ifr;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	struct in6_ifreq ifr6 = { .ifr6_prefixlen = 128, .ifr6_ifindex = (int)if_nametoindex("lo") };
	_cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	_cleanup_close_ int s6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo:dns");
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, SBX_DNS_ADDR, &sin->sin_addr);
	if (s < 0 || ioctl(s, SIOCSIFADDR, &ifr) < 0)
		return err_sys(err, "add %s to lo", SBX_DNS_ADDR);
	inet_pton(AF_INET6, SBX_DNS_ADDR6, &ifr6.ifr6_addr);
	if (s6 >= 0 && ifr6.ifr6_ifindex > 0)
		(void)!ioctl(s6, SIOCSIFADDR, &ifr6);
	return 0;
}

int netns_dns_socket(struct sbx_err *err)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(SBX_DNS_PORT) };
	_cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	inet_pton(AF_INET, SBX_DNS_ADDR, &a.sin_addr);
	if (add_stub_addresses(err) < 0)
		return -1;
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		return err_sys(err, "the DNS stub's socket on %s:%d", SBX_DNS_ADDR, SBX_DNS_PORT);
	return steal_fd(s);
}
