/* mavenmeta.h - Maven through the package gateway, the pure parts: a
 * request path below /maven/ in Maven Central's layout read strictly, a
 * checksum file's digest, and maven-metadata.xml (the network peer's, read
 * with libxml2, loaded on first use) read into its versions and written
 * again with only those the rules let through. */
#ifndef SBX_MAVENMETA_H
#define SBX_MAVENMETA_H

#include <stdbool.h>
#include <stddef.h>

#include "pkg/sri.h"

#define MAVENMETA_MAX (4U << 20)     /* bytes of one maven-metadata.xml */
#define MAVENMETA_VERSIONS_MAX 10000 /* versions in one */
#define MAVENMETA_PLUGINS_MAX 2000   /* plugins in a group's */
#define MAVEN_SEG_MAX 128            /* one path segment, a version */
#define MAVEN_PATH_MAX 1024

enum maven_kind { MAVEN_METADATA, MAVEN_FILE };

/* A request path: GROUP/AS/DIRS/ARTIFACT/maven-metadata.xml or
 * GROUP/.../ARTIFACT/VERSION/ARTIFACT-VERSION[-CLASSIFIER].EXT, each
 * optionally with .sha1 or .sha256 (its checksum is asked for, sum). */
struct maven_req {
	enum maven_kind kind;
	char group[MAVEN_PATH_MAX];    /* dotted: org.example */
	char artifact[MAVEN_SEG_MAX + 1];
	char version[MAVEN_SEG_MAX + 1]; /* MAVEN_FILE only */
	char name[MAVEN_PATH_MAX + MAVEN_SEG_MAX + 2]; /* GROUP:ARTIFACT, as the rules name it */
	char path[MAVEN_PATH_MAX];     /* the file's path (no checksum suffix), as upstream has it */
	bool sum;                      /* the checksum of path is asked for, in sum_algo */
	enum sri_algo sum_algo;
};

/* 0, or -1 with why (a static string): segments of [A-Za-z0-9_.-] ('+'
 * too in a version and a file name), none empty, holding ".." or starting
 * with '.' or '-', the group's directories without '.', no '%', the file named after the artifact and version; a SNAPSHOT
 * is refused (sbxrun serves releases), as are checksums other than .sha1
 * and .sha256 (.md5, .sha512) and signatures. */
int maven_request(const char *path, size_t len, struct maven_req *r, const char **why);

/* A .sha1 or .sha256 file: its first word, 40 or 64 hex digits (what may
 * follow is a file name); 0 with *out, or -1. */
int maven_checksum(const char *body, size_t len, enum sri_algo algo, struct sri *out);

struct mavenmeta_plugin {
	char name[MAVEN_SEG_MAX * 2], prefix[MAVEN_SEG_MAX + 1], artifact[MAVEN_SEG_MAX + 1];
};

struct mavenmeta {
	bool versioning;  /* an artifact's document; else a group's (plugins) */
	char group[MAVEN_PATH_MAX], artifact[MAVEN_SEG_MAX + 1];  /* "" when absent */
	char latest[MAVEN_SEG_MAX + 1], release[MAVEN_SEG_MAX + 1], updated[32];
	char (*versions)[MAVEN_SEG_MAX + 1];
	size_t n;
	size_t dropped;   /* versions that are not versions sbxrun serves */
	struct mavenmeta_plugin *plugins;
	size_t nplugins;
};

/* Reads a maven-metadata.xml: 0, or -1 with why (not XML, a DOCTYPE, not
 * <metadata>, too large, too many versions). Free with mavenmeta_free. */
int mavenmeta_parse(const char *body, size_t len, struct mavenmeta *m, const char **why);
void mavenmeta_free(struct mavenmeta *m);

/* The document again (malloc'd, *len bytes): the versions where keep[i]
 * (keep NULL: all), latest and release those upstream named when kept,
 * else the last kept in the list's order (the list is in the order they
 * were deployed), a SNAPSHOT never the release. */
char *mavenmeta_write(const struct mavenmeta *m, const bool *keep, size_t *len);

#endif
