#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
#include <zlib.h>

// deflateInit2/inflateInit2 are macros (they pass ZLIB_VERSION and sizeof(z_stream)).
static inline int czlib_deflateInit2(z_streamp s, int level, int windowBits) {
    return deflateInit2(s, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
static inline int czlib_inflateInit2(z_streamp s, int windowBits) { return inflateInit2(s, windowBits); }
#endif
