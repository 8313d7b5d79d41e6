/* tests/experiments/fdmount.c - mounts FUSE on TARGET with an open /dev/fuse fd and runs the
 * daemon with "@" replaced by /dev/fd/N (libfuse >= 3.3 takes a mounted fd so), as sbxrun does. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
/* fdmount TARGET OPTS -- CMD...: mounts fuse on TARGET with an fd, runs CMD with /dev/fd/N substituted for "@" */
int main(int argc, char **argv)
{
	int fd = open("/dev/fuse", O_RDWR);
	if (fd < 0) { perror("open /dev/fuse"); return 1; }
	char o[512]; snprintf(o, sizeof o, "fd=%d,rootmode=40000,user_id=%d,group_id=%d,allow_other,default_permissions", fd, getuid(), getgid());
	if (mount("sbxrun", argv[1], "fuse.sbxrun", MS_NOSUID | MS_NODEV, o) < 0) { perror("mount fuse"); return 1; }
	char dev[32]; snprintf(dev, sizeof dev, "/dev/fd/%d", fd);
	for (int i = 4; i < argc; i++) if (!strcmp(argv[i], "@")) argv[i] = dev;
	execvp(argv[4], argv + 4); perror("exec"); return 1;
}
