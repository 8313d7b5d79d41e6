/* fuzz_pypidoc.c - libFuzzer harness for the package gateway's reader of
 * PyPI's simple pages (pkg/pypi_doc.c: the HTML anchor scanner and the
 * JSON form): any page from upstream must parse or fail; what it serves
 * from a page must read back as the same files, each with its digest; the
 * first line of the input is also tried as an Accept header. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/pypi_doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const struct pypi_page *pg, size_t served, int json)
{
	struct pypi_page back;
	struct sbx_err err;
	size_t len = 0;
	char *out = json ? pypi_doc_json(pg, "p", "http://g/pypi/files/p/", NULL, &len)
			 : pypi_doc_html(pg, "p", "http://g/pypi/files/p/", NULL, &len);

	if (!out || strlen(out) != len || pypi_doc_parse(out, len, &back, &err) < 0 || back.n != served)
		abort();
	for (size_t i = 0; i < back.n; i++) {
		const struct pypi_file *f = pypi_doc_find(pg, back.files[i].filename);
		if (!f || strcmp(f->sha256, back.files[i].sha256) != 0 ||
		    strncmp(back.files[i].url, "http://g/pypi/files/p/", 22) != 0)
			abort();
	}
	pypi_page_free(&back);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pypi_page pg;
	struct sbx_err err;
	char *buf = malloc(size + 1), version[64];
	size_t served = 0;

	memcpy(buf, data, size);
	buf[size] = '\0';
	if (pypi_doc_parse(buf, size, &pg, &err) == 0) {
		for (size_t i = 0; i < pg.n; i++) {
			const struct pypi_file *f = &pg.files[i];
			size_t sl = strlen(f->sha256);
			if (!f->filename[0] || strchr(f->filename, '/') || f->filename[0] == '.' || (sl && sl != 64))
				abort();
			served += sl == 64 && pypi_doc_find(&pg, f->filename) == f;
			pypi_doc_version("p", f->filename, version, sizeof(version));
		}
		/* a name listed twice is served twice but found once: skip those */
		size_t withsha = 0;
		for (size_t i = 0; i < pg.n; i++)
			withsha += pg.files[i].sha256[0] != '\0';
		if (withsha == served) {
			round_trip(&pg, served, 0);
			round_trip(&pg, served, 1);
		}
		pypi_page_free(&pg);
	}
	buf[strcspn(buf, "\n")] = '\0';
	(void)pypi_doc_wants_json(buf);
	free(buf);
	return 0;
}
