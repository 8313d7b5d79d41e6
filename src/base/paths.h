/* paths.h - where sbxrun keeps things: stores, state, stock data. */
#ifndef SBX_PATHS_H
#define SBX_PATHS_H

#include "base/err.h"

/* $XDG_DATA_HOME/sbxrun (or ~/.local/share/sbxrun); created 0700. */
int paths_data_dir(char **out, struct sbx_err *err);
/* $XDG_RUNTIME_DIR/sbxrun (or /tmp/sbxrun-$UID, or a private directory in
 * its place when that one is not ours); created 0700 and checked. */
int paths_state_dir(char **out, struct sbx_err *err);
/* Where a download bound for a sandbox is staged: $XDG_CACHE_HOME/sbxrun
 * (or ~/.cache/sbxrun), on disk rather than in memory; the state directory
 * when that cannot be made. Created 0700 and checked. */
int paths_staging_dir(char **out, struct sbx_err *err);
/* The user's profile directory (may not exist). */
char *paths_user_profiles(void);
/* Stock data (profiles/, rootfs/): next to the binary in a build tree,
 * else the installed share directory. Returns a static string. */
const char *paths_stock_dir(void);
#define SBX_SYSTEM_PROFILES "/etc/sbxrun/profiles"
#define SBX_SYSTEM_STORE "/var/lib/sbxrun/images"
/* Called as root, sbxrun never makes the sandbox's root the host's root: the
 * sandbox (and the images it runs, owned accordingly) use this unprivileged
 * host uid and gid, far above the usual subuid ranges. */
#define SBX_ROOT_HOST_UID 2147000000u
/* Root's sandboxes' uid and gid: SBX_ROOT_HOST_UID, or where this user
 * namespace does not map it (root of a rootless container: its own uid
 * and 65536 subuids) the highest id both of its maps hold, never 0. */
unsigned paths_root_host_id(void);
/* The same parsed from a uid_map's and a gid_map's text (unit tests). */
unsigned paths_root_host_id_of(const char *uid_map, const char *gid_map);
/* The host uid the sandbox's files belong to: the caller, or the above. */
unsigned paths_sandbox_host_uid(void);
/* Called as root, host-side writes into a sandbox are made as that uid (so
 * they belong to the sandbox's root); enter=0 goes back. No-op otherwise. */
void paths_as_sandbox_owner(int enter);

/* Into a session, a download (cmd/download.c) stages the file in the
 * user's cache directory, then copies it into DEST's directory under this
 * name (with its pid), renamed when complete: what a killed download may
 * leave, and what the MCP server removes when it cancels one. */
#define SBX_DOWNLOAD_TMP_NAME ".sbxrun-download-%d"

#endif
