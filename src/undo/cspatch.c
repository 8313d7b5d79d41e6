/* cspatch.c - git's binary patch and blob ids, and the export of a change
 * set as a patch (cspatch.h). A patch is what git and every review tool
 * read: `changes export --patch` is the exact form of what `changes apply`
 * writes, binary files included, for a reviewer's own tools or another
 * checkout. */
#define _GNU_SOURCE
#include "undo/cspatch.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/util.h"
#include "undo/csdiff.h"

#define CHUNK 65536
#define LINE 52 /* bytes of deflated data a base85 line holds */

static const char en85[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

void cspatch_blob_id(const char *s, size_t n, char out[CS_BLOB_HEX + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	char head[32];
	int hl = snprintf(head, sizeof(head), "blob %zu", n) + 1; /* with its NUL */
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	EVP_DigestInit_ex(c, EVP_sha1(), NULL);
	EVP_DigestUpdate(c, head, (size_t)hl);
	EVP_DigestUpdate(c, s, n);
	EVP_DigestFinal_ex(c, md, NULL);
	EVP_MD_CTX_free(c);
	hex_encode(md, CS_BLOB_HEX / 2, out);
}

int cspatch_blob_id_fd(int fd, char out[CS_BLOB_HEX + 1], uint64_t *size, struct sbx_err *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	struct stat st;
	char head[32];
	_cleanup_free_ char *buf = xmalloc(CHUNK);
	uint64_t n = 0;

	if (fstat(fd, &st) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		return err_sys(err, "read a file of the change set");
	int hl = snprintf(head, sizeof(head), "blob %jd", (intmax_t)st.st_size) + 1;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	EVP_DigestInit_ex(c, EVP_sha1(), NULL);
	EVP_DigestUpdate(c, head, (size_t)hl);
	ssize_t r;
	while ((r = read(fd, buf, CHUNK)) > 0) {
		EVP_DigestUpdate(c, buf, (size_t)r);
		n += (uint64_t)r;
	}
	EVP_DigestFinal_ex(c, md, NULL);
	EVP_MD_CTX_free(c);
	if (r < 0 || n != (uint64_t)st.st_size)
		return err_set(err, r < 0 ? errno : 0, "read a file of the change set: it changed while read");
	hex_encode(md, CS_BLOB_HEX / 2, out);
	*size = n;
	return 0;
}

/* One line of base85: its length as a letter, then 5 characters for each
 * 4 bytes (the last group padded with zeros), as git's encode_85. */
static void line85(FILE *out, const unsigned char *d, size_t n)
{
	char buf[LINE / 4 * 5 + 8], *o = buf;

	fputc(n <= 26 ? (int)('A' + n - 1) : (int)('a' + n - 27), out);
	for (size_t i = 0; i < n; i += 4) {
		uint32_t acc = 0;
		for (size_t k = 0; k < 4; k++)
			acc |= (uint32_t)(i + k < n ? d[i + k] : 0) << (24 - 8 * k);
		for (int k = 4; k >= 0; k--, acc /= 85)
			o[k] = en85[acc % 85];
		o += 5;
	}
	fwrite(buf, 1, (size_t)(o - buf), out);
	fputc('\n', out);
}

/* Deflates what fd holds (nothing when fd < 0) and writes it as base85
 * lines; the deflated bytes wait only until a line is full. */
static int deflate_lines(int fd, FILE *out, struct sbx_err *err)
{
	z_stream z = { 0 };
	_cleanup_free_ unsigned char *in = xmalloc(CHUNK), *def = xmalloc(CHUNK + LINE);
	size_t have = 0;
	int flush = Z_NO_FLUSH, zr = Z_OK;

	if (deflateInit(&z, Z_DEFAULT_COMPRESSION) != Z_OK)
		return err_set(err, 0, "deflate: cannot start zlib");
	while (zr != Z_STREAM_END) {
		if (!z.avail_in && flush == Z_NO_FLUSH) {
			ssize_t r = fd < 0 ? 0 : read(fd, in, CHUNK);
			if (r < 0) {
				deflateEnd(&z);
				return err_sys(err, "read a file of the change set");
			}
			z.next_in = in, z.avail_in = (unsigned)r;
			flush = r ? Z_NO_FLUSH : Z_FINISH;
		}
		z.next_out = def + have, z.avail_out = (unsigned)(CHUNK + LINE - have);
		zr = deflate(&z, flush);
		have = CHUNK + LINE - z.avail_out;
		size_t off = 0;
		for (; have - off >= LINE; off += LINE)
			line85(out, def + off, LINE);
		memmove(def, def + off, have - off);
		have -= off;
	}
	deflateEnd(&z);
	if (have)
		line85(out, def, have);
	return 0;
}

int cspatch_binary(int fd, FILE *out, struct sbx_err *err)
{
	struct stat st = { 0 };

	if (fd >= 0 && (fstat(fd, &st) < 0 || lseek(fd, 0, SEEK_SET) < 0))
		return err_sys(err, "read a file of the change set");
	fprintf(out, "GIT binary patch\nliteral %jd\n", (intmax_t)st.st_size);
	if (deflate_lines(fd, out, err) < 0)
		return -1;
	fputc('\n', out);
	return 0;
}

int changeset_export_patch(const struct changeset *cs, char *const *paths, size_t npaths,
			   unsigned umask_bits, const char *file, struct sbx_err *err)
{
	struct cs_render o = { .umask_bits = umask_bits, .patch = true };
	_cleanup_free_ char *tmp = xasprintf("%s.sbxrun-XXXXXX", file);
	int fd = mkostemp(tmp, O_CLOEXEC);

	if (fd < 0)
		return err_sys(err, "export: create '%s'", tmp);
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return err_sys(err, "export: open '%s'", tmp);
	}
	int r = changeset_render_diff(cs, paths, npaths, &o, f, err);
	if (r == 0 && (fflush(f) != 0 || fsync(fileno(f)) < 0 || fchmod(fileno(f), 0666 & ~umask_bits) < 0))
		r = err_sys(err, "export: write '%s'", file);
	if (fclose(f) != 0 && r == 0)
		r = err_sys(err, "export: write '%s'", file);
	if (r == 0 && rename(tmp, file) < 0)
		r = err_sys(err, "export: rename to '%s'", file);
	if (r < 0)
		unlink(tmp);
	return r;
}
