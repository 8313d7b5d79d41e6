/* imagesrc.c - see imagesrc.h. */
#include "gateway/imagesrc.h"

#include <stdio.h>
#include <string.h>

#include "pkg/gosum.h"

/* v as it is, or the image's where v names the set. */
static const char *image_or(const char *v, const char *set, const char *image)
{
	if (!v || strcmp(v, set) != 0)
		return v;
	return image && image[0] ? image : NULL;
}

const char *imagesrc_go_sumdb(const struct sbx_config *cfg, const struct hostmatch_sets *img)
{
	if (cfg->pkg_go_sumdb)
		return cfg->pkg_go_sumdb;
	if (!cfg->pkg_go || strcmp(cfg->pkg_go, sbx_host_sets[SBX_SET_GO]) != 0 || !img || !img->go_sumdb)
		return NULL;
	/* the image's key, checked as the profile's is: "NAME URL" (no key
	 * found in its go) or a key whose hash is wrong is none */
	char key[512];
	size_t n = strcspn(img->go_sumdb, " "), name_len;
	const char *why;
	if (n >= sizeof(key) || !img->go_sumdb[n])
		return NULL;
	snprintf(key, sizeof(key), "%.*s", (int)n, img->go_sumdb);
	return gosum_vkey_check(key, &name_len, &why) == 0 ? img->go_sumdb : NULL;
}

const char *imagesrc_go(const struct sbx_config *cfg, const struct hostmatch_sets *img)
{
	/* every module is verified against a checksum database: an image
	 * whose GOSUMDB is off, or whose key was not found, gets no /go/ */
	if (!imagesrc_go_sumdb(cfg, img))
		return NULL;
	return image_or(cfg->pkg_go, sbx_host_sets[SBX_SET_GO], img ? img->go_proxy : NULL);
}

const char *imagesrc_cargo(const struct sbx_config *cfg, const struct hostmatch_sets *img)
{
	return image_or(cfg->pkg_cargo, sbx_host_sets[SBX_SET_CARGO], img ? img->cargo_index : NULL);
}

const char *imagesrc_maven(const struct sbx_config *cfg, const struct hostmatch_sets *img)
{
	return image_or(cfg->pkg_maven, sbx_host_sets[SBX_SET_MAVEN], img ? img->maven_repo : NULL);
}
