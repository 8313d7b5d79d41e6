/* fuseroot.h - the root the fuse-overlayfs daemon runs in: only its binary,
 * the loader and libraries (read-only), the image (read-only) and the
 * writable layer, with the host's root detached. */
#ifndef SBX_FUSEROOT_H
#define SBX_FUSEROOT_H

/* In the forked daemon, in its private copy of the sandbox's mount
 * namespace (staging dirs at /tmp/lower and /tmp/layer), as pid 1 of a pid
 * namespace of its own (its /proc shows only that), with capabilities in
 * its user namespace: builds the root and pivots into it. There, the
 * image is /lower and the layer /layer (upper and work). `bin` is the
 * daemon's binary as a real path (no symlinks). Returns 0, or -1 with errno
 * (nothing printed: the daemon's errors are exit 125). */
int fuseroot_enter(const char *bin);
/* Where `bin` is in that root: itself under /usr, /bin, /sbin, /lib or
 * /lib64, else "/fuse-overlayfs" (it is bound there). */
const char *fuseroot_exec_path(const char *bin);

#endif
