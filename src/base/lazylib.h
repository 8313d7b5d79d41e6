/* lazylib.h - the libraries sbxrun loads on first use (lazylib.c). */
#ifndef SBX_LAZYLIB_H
#define SBX_LAZYLIB_H

#include "base/err.h"

#define SBX_LIBARCHIVE "libarchive.so.13"
#define SBX_LIBCURL "libcurl.so.4"
#define SBX_LIBCRYPTO "libcrypto.so.3"
#define SBX_LIBSSL "libssl.so.3"
#define SBX_LIBXML2 "libxml2.so.2"

/* Loads lib now (the first call of one of its functions would end sbxrun
 * with exit 125 where it is missing): a missing one is an error naming
 * the package to install. Where a forked child will use it, load it first. */
int lazylib_load(const char *lib, struct sbx_err *err);

#endif
