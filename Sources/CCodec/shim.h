#ifndef SLUICE_CCODEC_SHIM_H
#define SLUICE_CCODEC_SHIM_H
#include <zlib.h>
#include <brotli/decode.h>
#include <brotli/encode.h>

/* inflateInit2/deflateInit2 are macros; these are callable from Swift. */
static inline int sluice_inflate_init(z_stream *stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}
static inline int sluice_deflate_init(z_stream *stream, int level, int window_bits) {
    return deflateInit2(stream, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
}
#endif
