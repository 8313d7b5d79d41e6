/* imgsrc.h - what an image's go, cargo and maven say their sources are
 * (@go, @cargo, @maven), read from the lines discover.c's probe prints in
 * a sandbox of the image: no I/O here, so each reader is tested alone. */
#ifndef SBX_IMGSRC_H
#define SBX_IMGSRC_H

#include <stddef.h>

/* Each "" when the image names none. */
struct imgsrc {
	char *go_proxy;    /* GOPROXY's first URL (none when off or direct comes first) */
	char *go_sumdb;    /* "NAME+HASH+KEY URL", or "NAME URL" when the key is unknown */
	char *cargo_index; /* crates-io's replacement, a sparse index's https URL */
	char *maven_repo;  /* the mirror of central in settings.xml */
	char *maven_jar;   /* the path of maven-model-builder's jar in the image */
	const char *note;  /* why a tool's source was not taken, or NULL */
};

/* Reads the probe's go-*, cargo-* and maven-* lines of out into src. */
void imgsrc_parse(const char *out, struct imgsrc *src);
void imgsrc_free(struct imgsrc *src);

/* GOPROXY's value: its first URL, copied to buf; NULL when there is none
 * or "off"/"direct" comes before it. */
const char *imgsrc_goproxy(const char *v, char *buf, size_t size);
/* GOSUMDB's value ("NAME", "NAME+HASH+KEY", either then " URL"; off) with
 * the key the go binary carries for NAME (or NULL): "KEY URL" or "NAME
 * URL" (the default URL https://NAME), malloc'd; NULL when off. */
char *imgsrc_gosumdb(const char *v, const char *key);
/* The registry a cargo config.toml replaces crates-io with
 * ([source.crates-io] replace-with, then [source.X] registry or
 * [registries.X] index), "sparse+" dropped, copied to buf; NULL when none
 * is named or it is not a sparse registry (*why then says which). */
const char *imgsrc_cargo(const char *toml, char *buf, size_t size, const char **why);
/* The URL of the first <mirror> of a Maven settings.xml whose mirrorOf
 * covers central, copied to buf; NULL when none. */
const char *imgsrc_maven_settings(const char *xml, size_t len, char *buf, size_t size);
/* Central's URL in Maven's super POM (pom-4.0.0.xml); NULL when none. */
const char *imgsrc_maven_superpom(const char *xml, size_t len, char *buf, size_t size);

#endif
