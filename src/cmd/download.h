/* download.h - the host-side fetch behind `sbxrun download`, for the
 * commands that offer it too (`sbxrun mcp`). */
#ifndef SBX_DOWNLOAD_H
#define SBX_DOWNLOAD_H

#include "base/config.h"
#include "base/paths.h"

/* Fetches url under cfg's [download] policy into dest: relative to the
 * workspace of cfg->session, else below the current directory. */
int download_run(const struct sbx_config *cfg, const char *url, const char *dest, struct sbx_err *err);
#define DOWNLOAD_TMP_NAME SBX_DOWNLOAD_TMP_NAME /* base/paths.h */

#endif
