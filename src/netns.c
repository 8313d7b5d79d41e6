/* netns.c - an empty network namespace with only lo up: every connect
 * elsewhere fails with ENETUNREACH, as in the hosted containers. */
#define _GNU_SOURCE
#include "netns.h"

#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"

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
