// hiredis with its libevent adapter (header-only): the async context runs on Sluice's own loop.
// A libc header first keeps fd_set identical to Glibc's module (see NOTES-interop.md).
#include <sys/types.h>
#include <stdlib.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <hiredis/async.h>
#include <hiredis/adapters/libevent.h>

/// Starts connecting on `base`; `NULL` (and `error` filled) when the context could not be made.
static inline redisAsyncContext *sluice_redis_connect(
    const char *host, int port, struct event_base *base, void *data,
    redisConnectCallback *on_connect, redisDisconnectCallback *on_disconnect, char *error, size_t error_size) {
    redisAsyncContext *context = redisAsyncConnect(host, port);
    if (context == NULL) { snprintf(error, error_size, "out of memory"); return NULL; }
    if (context->err) {
        snprintf(error, error_size, "%s", context->errstr);
        redisAsyncFree(context);
        return NULL;
    }
    context->data = data;
    redisLibeventAttach(context, base);
    redisAsyncSetConnectCallback(context, on_connect);
    redisAsyncSetDisconnectCallback(context, on_disconnect);
    return context;
}

static inline void *sluice_redis_data(const redisAsyncContext *context) { return context->data; }
static inline void sluice_redis_forget(redisAsyncContext *context) { context->data = NULL; }
static inline const char *sluice_redis_error(const redisAsyncContext *context) { return context->errstr; }

static inline int sluice_redis_command(
    redisAsyncContext *context, redisCallbackFn *callback, void *privdata, int argc, const char **argv,
    const size_t *argvlen) {
    return redisAsyncCommandArgv(context, callback, privdata, argc, argv, argvlen);
}

static inline int sluice_reply_type(const redisReply *reply) { return reply->type; }
static inline long long sluice_reply_integer(const redisReply *reply) { return reply->integer; }
static inline size_t sluice_reply_length(const redisReply *reply) { return reply->len; }
static inline const char *sluice_reply_bytes(const redisReply *reply) { return reply->str; }
static inline size_t sluice_reply_count(const redisReply *reply) { return reply->elements; }
static inline const redisReply *sluice_reply_element(const redisReply *reply, size_t index) {
    return reply->element[index];
}
