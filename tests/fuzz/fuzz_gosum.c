/* fuzz_gosum.c - libFuzzer harness for what the gateway reads from Go's
 * checksum database and module proxy (pkg/gosum.c): the input as a
 * lookup answer for mods.example/dep01 v1.0.0 (its record lines, then the
 * signed note, checked against a fixed verifier key) and as a module zip
 * whose h1 hash is taken. A lookup accepted must name exactly the module
 * and version asked for; nothing may verify but a note the key signed
 * (the seed "lookup" is one: its note must keep verifying). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pkg/gosum.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define VKEY "sumdb.fixture+0f3157c6+AScoGsRYqQdhX9GSt2nCMvdUggw1CbGEzdWatHY7qvnw"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char zip[32], mod[32], h[32];
	size_t note;
	const char *s = (const char *)data, *why;

	if (gosum_lookup(s, size, "mods.example/dep01", "v1.0.0", zip, mod, &note, &why) == 0) {
		if (note > size || memcmp(s, "0", 0) != 0 || !memmem(s, note, "mods.example/dep01 v1.0.0 h1:", 29) ||
		    !memmem(s, note, "mods.example/dep01 v1.0.0/go.mod h1:", 36))
			abort();
		(void)gosum_note_verify(s + note, size - note, VKEY, &why);
	}
	(void)gosum_note_verify(s, size, VKEY, &why);
	int fd = memfd_create("zip", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, data, size) == (ssize_t)size)
		(void)gosum_zip_h1(fd, h, &why);
	if (fd >= 0)
		close(fd);
	return 0;
}
