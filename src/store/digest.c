/* digest.c - sha256 of a file with libcrypto's EVP interface, and the cache
 * that lets an unchanged tarball be re-imported without reading it again. */
#define _GNU_SOURCE
#include "store/digest.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

bool digest_valid(const char *s)
{
	size_t i = 0;
	for (; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == SBX_DIGEST_HEX;
}

static int hash_loop(EVP_MD_CTX *ctx, int fd, struct sbx_err *err)
{
	_cleanup_free_ char *buf = xmalloc(1 << 20);

	for (;;) {
		ssize_t n = read(fd, buf, 1 << 20);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_sys(err, "read");
		if (n == 0)
			return 0;
		if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1)
			return err_set(err, 0, "sha256 update failed");
	}
}

int digest_fd(int fd, char out[SBX_DIGEST_HEX + 1], struct sbx_err *err)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	int r = -1;

	if (!ctx)
		return err_set(err, ENOMEM, "sha256");
	if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		err_set(err, 0, "sha256 init failed");
		goto out;
	}
	if (hash_loop(ctx, fd, err) < 0)
		goto out;
	if (EVP_DigestFinal_ex(ctx, md, &len) != 1 || len * 2 != SBX_DIGEST_HEX) {
		err_set(err, 0, "sha256 final failed");
		goto out;
	}
	for (unsigned i = 0; i < len; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	r = 0;
out:
	EVP_MD_CTX_free(ctx);
	return r;
}

static void cache_key(const struct stat *st, char *buf, size_t size)
{
	snprintf(buf, size, "%llx-%llx-%llx-%lld.%09ld", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino, (unsigned long long)st->st_size,
		 (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
}

/* Written to a temporary name and renamed, so a reader never sees half. */
static int cache_store(int cachefd, const char *key, const char *hex, struct sbx_err *err)
{
	char tmp[160];
	snprintf(tmp, sizeof(tmp), ".tmp-%s.%d", key, (int)getpid());
	_cleanup_close_ int fd = openat(cachefd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
					O_NOFOLLOW, 0644);
	if (fd < 0)
		return err_sys(err, "digest cache: create '%s'", tmp);
	if (write_all(fd, hex, SBX_DIGEST_HEX) < 0 || write_all(fd, "\n", 1) < 0) {
		err_sys(err, "digest cache: write '%s'", tmp);
		unlinkat(cachefd, tmp, 0);
		return -1;
	}
	if (renameat(cachefd, tmp, cachefd, key) < 0) {
		err_sys(err, "digest cache: rename '%s'", tmp);
		unlinkat(cachefd, tmp, 0);
		return -1;
	}
	return 0;
}

int digest_cached(int cachefd, int fd, char out[SBX_DIGEST_HEX + 1], bool *hit,
		  struct sbx_err *err)
{
	struct stat st;
	char key[128];
	_cleanup_free_ char *text = NULL;
	struct sbx_err ignore = { 0 };

	*hit = false;
	if (fstat(fd, &st) < 0)
		return err_sys(err, "stat");
	cache_key(&st, key, sizeof(key));
	if (read_file_beneath(cachefd, key, 128, &text, NULL, &ignore) == 0) {
		text[strcspn(text, "\n")] = '\0';
		if (digest_valid(text)) {
			memcpy(out, text, SBX_DIGEST_HEX + 1);
			*hit = true;
			return 0;
		}
	}
	if (lseek(fd, 0, SEEK_SET) < 0)
		return err_sys(err, "seek");
	if (digest_fd(fd, out, err) < 0)
		return -1;
	/* A file changed while it was read must not be cached under the old identity. */
	struct stat after;
	if (fstat(fd, &after) == 0 && after.st_size == st.st_size &&
	    after.st_mtim.tv_sec == st.st_mtim.tv_sec && after.st_mtim.tv_nsec == st.st_mtim.tv_nsec)
		return cache_store(cachefd, key, out, err);
	return 0;
}
