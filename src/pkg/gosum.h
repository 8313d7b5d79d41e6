/* gosum.h - what Go's checksum database vouches for, checked without any
 * I/O but a file's reading: the h1: hash of a module zip (dirhash's Hash1:
 * SHA-256 over the sorted lines "SHA256HEX  NAME\n" of its files) and of a
 * go.mod, a lookup answer's record lines, and the signed note that follows
 * them (ed25519, against the verifier key the profile names). */
#ifndef SBX_GOSUM_H
#define SBX_GOSUM_H

#include <stdbool.h>
#include <stddef.h>

#define GOSUM_ZIP_MAX (500ULL << 20)  /* the go command's cap on a module's files, unzipped */

/* The h1 hash of the module zip open at fd (read from offset 0, through
 * its central directory as the go command reads it). 0, or -1 (why). */
int gosum_zip_h1(int fd, unsigned char h1[32], const char **why);

/* The h1 hash of a go.mod's bytes (a tree of the one file "go.mod"). */
void gosum_mod_h1(const void *p, size_t n, unsigned char h1[32]);

/* "h1:BASE64" of h into out (at least 48 bytes). */
void gosum_h1_string(const unsigned char h[32], char *out, size_t size);

/* A lookup answer (/lookup/PATH@VERSION): its record number, the lines
 * "PATH VERSION h1:..." and "PATH VERSION/go.mod h1:..." for exactly this
 * path and version, a blank line, then the signed tree note (*note: its
 * offset). Returns 0 with both hashes, or -1 (why). */
int gosum_lookup(const char *body, size_t len, const char *path, const char *version, unsigned char zip[32],
		 unsigned char mod[32], size_t *note, const char **why);

/* A verifier key "NAME+HASH+BASE64" (golang.org/x/mod/sumdb/note): 0 with
 * its name's length, or -1 (why). */
int gosum_vkey_check(const char *vkey, size_t *name_len, const char **why);

/* Whether the signed note (text, a blank line, signature lines "— NAME
 * BASE64") carries a valid signature by vkey over its text. 0, or -1 (why). */
int gosum_note_verify(const char *note, size_t len, const char *vkey, const char **why);

#endif
