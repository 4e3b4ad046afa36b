// Typed faces for libcurl's variadic calls, which Swift cannot import. No logic here.
#include <curl/curl.h>

typedef int (*sluice_curl_socket_cb)(CURL *, curl_socket_t, int, void *, void *);
typedef int (*sluice_curl_timer_cb)(CURLM *, long, void *);
typedef curl_socket_t (*sluice_curl_opensocket_cb)(void *, curlsocktype, struct curl_sockaddr *);
typedef int (*sluice_curl_sockopt_cb)(void *, curl_socket_t, curlsocktype);
typedef int (*sluice_curl_closesocket_cb)(void *, curl_socket_t);

static inline CURLcode sluice_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sluice_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sluice_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sluice_easy_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sluice_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sluice_easy_setopt_write_cb(CURL *h, CURLoption o, curl_write_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sluice_easy_setopt_read_cb(CURL *h, CURLoption o, curl_read_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sluice_easy_setopt_opensocket_cb(CURL *h, CURLoption o, sluice_curl_opensocket_cb v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sluice_easy_setopt_closesocket_cb(CURL *h, CURLoption o, sluice_curl_closesocket_cb v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sluice_easy_setopt_sockopt_cb(CURL *h, CURLoption o, sluice_curl_sockopt_cb v) { return curl_easy_setopt(h, o, v); }

static inline CURLcode sluice_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode sluice_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode sluice_easy_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode sluice_easy_getinfo_pointer(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }

static inline CURLMcode sluice_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode sluice_multi_setopt_pointer(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode sluice_multi_setopt_socket_cb(CURLM *m, CURLMoption o, sluice_curl_socket_cb v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode sluice_multi_setopt_timer_cb(CURLM *m, CURLMoption o, sluice_curl_timer_cb v) { return curl_multi_setopt(m, o, v); }
