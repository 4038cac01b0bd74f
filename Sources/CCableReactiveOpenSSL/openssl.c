// See CCableReactiveOpenSSL.h. The table has one pointer per OpenSSL function, typed from OpenSSL's own
// declarations (`__typeof__`), so a wrapper whose call does not match the header does not compile.
#if defined(__linux__)
#include "CCableReactiveOpenSSL.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void cr_malloc_trim(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

#define CR_STRINGIFY2(x) #x
#define CR_STRINGIFY(x) CR_STRINGIFY2(x)

// Every function we call. Those of libcrypto resolve through libssl's handle: dlsym searches the library's
// dependencies too.
#define CR_OPENSSL_FUNCTIONS(X)                                                                                  \
    X(OPENSSL_init_ssl)                                                                                          \
    X(TLS_client_method)                                                                                         \
    X(SSL_CTX_new)                                                                                               \
    X(SSL_CTX_free)                                                                                              \
    X(SSL_CTX_set_options)                                                                                       \
    X(SSL_CTX_ctrl)                                                                                              \
    X(SSL_CTX_set_verify)                                                                                        \
    X(SSL_CTX_set_default_verify_paths)                                                                          \
    X(SSL_CTX_load_verify_locations)                                                                             \
    X(SSL_new)                                                                                                   \
    X(SSL_free)                                                                                                  \
    X(SSL_set_bio)                                                                                               \
    X(SSL_set_connect_state)                                                                                     \
    X(SSL_set1_host)                                                                                             \
    X(SSL_ctrl)                                                                                                  \
    X(SSL_do_handshake)                                                                                          \
    X(SSL_get_error)                                                                                             \
    X(SSL_read)                                                                                                  \
    X(SSL_write)                                                                                                 \
    X(SSL_shutdown)                                                                                              \
    X(SSL_get_peer_cert_chain)                                                                                   \
    X(SSL_get_verify_result)                                                                                     \
    X(BIO_s_mem)                                                                                                 \
    X(BIO_new)                                                                                                   \
    X(BIO_free)                                                                                                  \
    X(BIO_write)                                                                                                 \
    X(BIO_read)                                                                                                  \
    X(BIO_ctrl_pending)                                                                                          \
    X(OPENSSL_sk_num)                                                                                            \
    X(OPENSSL_sk_value)                                                                                          \
    X(i2d_X509)                                                                                                  \
    X(X509_verify_cert_error_string)                                                                             \
    X(ERR_get_error)                                                                                             \
    X(ERR_clear_error)                                                                                           \
    X(ERR_error_string_n)

static struct {
#define CR_FIELD(name) __typeof__(name) *name;
    CR_OPENSSL_FUNCTIONS(CR_FIELD)
#undef CR_FIELD
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static const char *load_error = NULL;

static void load(void) {
    // The soname of the OpenSSL these headers describe (libssl.so.3 for 3.x), then the unversioned name.
#if defined(OPENSSL_VERSION_MAJOR) && OPENSSL_VERSION_MAJOR >= 3
    void *library = dlopen("libssl.so." CR_STRINGIFY(OPENSSL_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
#else
    void *library = dlopen("libssl.so.1.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
#endif
    if (library == NULL) library = dlopen("libssl.so", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (library == NULL) {
        load_error = dlerror();
        return;
    }
#define CR_RESOLVE(name)                                                                                         \
    api.name = (__typeof__(name) *)dlsym(library, #name);                                                        \
    if (api.name == NULL) {                                                                                      \
        load_error = "libssl lacks " #name;                                                                      \
        return;                                                                                                  \
    }
    CR_OPENSSL_FUNCTIONS(CR_RESOLVE)
#undef CR_RESOLVE
    loaded = 1;
}

int cr_openssl_load(void) {
    pthread_once(&load_once, load);
    return loaded;
}

const char *cr_openssl_load_error(void) {
    pthread_once(&load_once, load);
    return load_error;
}

int cr_OPENSSL_init_ssl(uint64_t opts, const OPENSSL_INIT_SETTINGS *settings) {
    return api.OPENSSL_init_ssl(opts, settings);
}
const SSL_METHOD *cr_TLS_client_method(void) { return api.TLS_client_method(); }
SSL_CTX *cr_SSL_CTX_new(const SSL_METHOD *method) { return api.SSL_CTX_new(method); }
void cr_SSL_CTX_free(SSL_CTX *ctx) { api.SSL_CTX_free(ctx); }
uint64_t cr_SSL_CTX_set_options(SSL_CTX *ctx, uint64_t options) { return api.SSL_CTX_set_options(ctx, options); }
long cr_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return api.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, version, NULL);
}
void cr_SSL_CTX_set_verify(SSL_CTX *ctx, int mode, SSL_verify_cb callback) {
    api.SSL_CTX_set_verify(ctx, mode, callback);
}
int cr_SSL_CTX_set_default_verify_paths(SSL_CTX *ctx) { return api.SSL_CTX_set_default_verify_paths(ctx); }
int cr_SSL_CTX_load_verify_locations(SSL_CTX *ctx, const char *file, const char *path) {
    return api.SSL_CTX_load_verify_locations(ctx, file, path);
}
SSL *cr_SSL_new(SSL_CTX *ctx) { return api.SSL_new(ctx); }
void cr_SSL_free(SSL *ssl) { api.SSL_free(ssl); }
void cr_SSL_set_bio(SSL *ssl, BIO *rbio, BIO *wbio) { api.SSL_set_bio(ssl, rbio, wbio); }
void cr_SSL_set_connect_state(SSL *ssl) { api.SSL_set_connect_state(ssl); }
int cr_SSL_set1_host(SSL *ssl, const char *hostname) { return api.SSL_set1_host(ssl, hostname); }
long cr_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return api.SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, (void *)name);
}
int cr_SSL_do_handshake(SSL *ssl) { return api.SSL_do_handshake(ssl); }
int cr_SSL_get_error(const SSL *ssl, int ret) { return api.SSL_get_error(ssl, ret); }
int cr_SSL_read(SSL *ssl, void *buf, int num) { return api.SSL_read(ssl, buf, num); }
int cr_SSL_write(SSL *ssl, const void *buf, int num) { return api.SSL_write(ssl, buf, num); }
int cr_SSL_shutdown(SSL *ssl) { return api.SSL_shutdown(ssl); }
long cr_SSL_get_verify_result(const SSL *ssl) { return api.SSL_get_verify_result(ssl); }
int cr_SSL_peer_chain_count(const SSL *ssl) {
    STACK_OF(X509) *chain = api.SSL_get_peer_cert_chain(ssl);
    return chain == NULL ? 0 : api.OPENSSL_sk_num((const OPENSSL_STACK *)chain);
}
int cr_SSL_peer_chain_der(const SSL *ssl, int index, unsigned char **out) {
    STACK_OF(X509) *chain = api.SSL_get_peer_cert_chain(ssl);
    if (chain == NULL || index < 0 || index >= api.OPENSSL_sk_num((const OPENSSL_STACK *)chain)) return -1;
    const X509 *certificate = api.OPENSSL_sk_value((const OPENSSL_STACK *)chain, index);
    return certificate == NULL ? -1 : api.i2d_X509(certificate, out);
}
const BIO_METHOD *cr_BIO_s_mem(void) { return api.BIO_s_mem(); }
BIO *cr_BIO_new(const BIO_METHOD *type) { return api.BIO_new(type); }
int cr_BIO_free(BIO *bio) { return api.BIO_free(bio); }
int cr_BIO_write(BIO *bio, const void *data, int length) { return api.BIO_write(bio, data, length); }
int cr_BIO_read(BIO *bio, void *data, int length) { return api.BIO_read(bio, data, length); }
size_t cr_BIO_ctrl_pending(BIO *bio) { return api.BIO_ctrl_pending(bio); }
const char *cr_X509_verify_cert_error_string(long n) { return api.X509_verify_cert_error_string(n); }
unsigned long cr_ERR_get_error(void) { return api.ERR_get_error(); }
void cr_ERR_clear_error(void) { api.ERR_clear_error(); }
void cr_ERR_error_string_n(unsigned long e, char *buf, size_t len) { api.ERR_error_string_n(e, buf, len); }
#endif
