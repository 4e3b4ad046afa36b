// OpenSSL 3 for the TLS face: headers, and typed wrappers for the macros and variadic calls
// Swift cannot import. No logic.
#include <sys/types.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/rand.h>
#include <openssl/bn.h>

static inline EVP_PKEY *ctls_ec_p256_key(void) { return EVP_EC_gen("P-256"); }

static inline int ctls_ctx_set_min_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

static inline int ctls_ctx_set_max_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}

static inline void ctls_ctx_set_servername_callback(SSL_CTX *ctx, int (*callback)(SSL *, int *, void *), void *arg) {
    SSL_CTX_set_tlsext_servername_callback(ctx, callback);
    SSL_CTX_set_tlsext_servername_arg(ctx, arg);
}

static inline long ctls_ctx_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

static inline long ctls_bio_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

static inline void ctls_free(void *pointer) { OPENSSL_free(pointer); }

static inline int ctls_err_reason(unsigned long code) { return ERR_GET_REASON(code); }

static inline int ctls_set_ex_data(SSL *ssl, void *data) { return SSL_set_ex_data(ssl, 0, data); }

static inline void *ctls_get_ex_data(SSL *ssl) { return SSL_get_ex_data(ssl, 0); }

static inline int ctls_ctx_set_ex_data(SSL_CTX *ctx, void *data) { return SSL_CTX_set_ex_data(ctx, 0, data); }

static inline void *ctls_ctx_get_ex_data(SSL_CTX *ctx) { return SSL_CTX_get_ex_data(ctx, 0); }

// The alert reasons a client sends when it does not trust the certificate it was shown.
static inline int ctls_is_certificate_rejection(int reason) {
    return reason == SSL_R_TLSV1_ALERT_UNKNOWN_CA || reason == SSL_R_SSLV3_ALERT_BAD_CERTIFICATE
        || reason == SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN || reason == SSL_R_TLSV1_ALERT_ACCESS_DENIED
        || reason == SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE || reason == SSL_R_TLSV1_ALERT_DECRYPT_ERROR;
}

static inline void ctls_bio_set_retry_read(BIO *bio) { BIO_set_retry_read(bio); }

static inline void ctls_bio_clear_retry_flags(BIO *bio) { BIO_clear_retry_flags(bio); }

static inline unsigned long ctls_name_flags_oneline(void) { return XN_FLAG_ONELINE & ~ASN1_STRFLGS_ESC_MSB; }

static inline int ctls_set_tlsext_host_name(SSL *ssl, const char *name) { return (int)SSL_set_tlsext_host_name(ssl, name); }
