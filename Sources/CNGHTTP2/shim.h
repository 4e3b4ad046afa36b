// nghttp2 for the HTTP2 face: the header, and typed accessors for the frame union and the
// callbacks Swift cannot name directly. No logic.
#include <nghttp2/nghttp2.h>

static inline uint8_t sluice_h2_frame_type(const nghttp2_frame *frame) { return frame->hd.type; }
static inline uint8_t sluice_h2_frame_flags(const nghttp2_frame *frame) { return frame->hd.flags; }
static inline int32_t sluice_h2_frame_stream(const nghttp2_frame *frame) { return frame->hd.stream_id; }
static inline int sluice_h2_headers_category(const nghttp2_frame *frame) { return (int)frame->headers.cat; }
static inline uint32_t sluice_h2_rst_error(const nghttp2_frame *frame) { return frame->rst_stream.error_code; }
