/* imagesrc.h - the image's own package sources (read at import,
 * store/discover.c) as host sets (@apt, @npm, @pypi, @go, @cargo, @maven)
 * (struct hostmatch_sets, filled from struct sbx_image by sandbox/plan.c)
 * and as the gateway's upstreams where the profile says so
 * ([packages] go = @go, cargo = @cargo, maven = @maven). */
#ifndef SBX_IMAGESRC_H
#define SBX_IMAGESRC_H

#include "base/config.h"
#include "net/hostmatch.h"

/* [packages] go, cargo, maven for a sandbox of cfg: the profile's URL as
 * it is, its @go, @cargo or @maven the image's source, NULL when there is
 * none (an image without the tool, or imported before sbxrun read it). */
const char *imagesrc_go(const struct sbx_config *cfg, const struct hostmatch_sets *img);
const char *imagesrc_cargo(const struct sbx_config *cfg, const struct hostmatch_sets *img);
const char *imagesrc_maven(const struct sbx_config *cfg, const struct hostmatch_sets *img);
/* go_sumdb for it: the profile's, else with go = @go the image's
 * ("NAME+HASH+KEY URL"); NULL: none, and then no Go upstream. */
const char *imagesrc_go_sumdb(const struct sbx_config *cfg, const struct hostmatch_sets *img);

#endif
