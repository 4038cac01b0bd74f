// The system's OpenSSL, loaded on first use rather than linked: a program that never opens a wss:// connection
// never maps libssl and libcrypto (their load-time relocations alone cost about 1.9 MiB of RSS). Each
// `cr_` function is the OpenSSL function of the same name, called through the table `cr_openssl_load` fills;
// the headers are OpenSSL's own, so every signature is checked against them at compile time. Call
// `cr_openssl_load` (once is enough; it is thread-safe) and only call the others when it returned 1.
#ifndef CCABLEREACTIVE_OPENSSL_H
#define CCABLEREACTIVE_OPENSSL_H
#if defined(__linux__)
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
// For tests that check our own digests against OpenSSL's (they link libcrypto themselves).
#include <openssl/evp.h>
#include <openssl/sha.h>

/// Loads libssl (and with it libcrypto) and resolves every function below; 1 on success, 0 when the library
/// or one of its functions is missing (see `cr_openssl_load_error`). Runs once per process.
int cr_openssl_load(void);
/// Why `cr_openssl_load` failed (`dlerror`'s text), or NULL.
const char *cr_openssl_load_error(void);

/// glibc's `malloc_trim(0)`: gives every malloc arena's free pages back to the kernel (the Glibc module does not
/// export `<malloc.h>`). Does nothing on other C libraries. Not OpenSSL's, but this is the transport's C target.
void cr_malloc_trim(void);

int cr_OPENSSL_init_ssl(uint64_t opts, const OPENSSL_INIT_SETTINGS *settings);
const SSL_METHOD *cr_TLS_client_method(void);
SSL_CTX *cr_SSL_CTX_new(const SSL_METHOD *method);
void cr_SSL_CTX_free(SSL_CTX *ctx);
uint64_t cr_SSL_CTX_set_options(SSL_CTX *ctx, uint64_t options);
long cr_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);
void cr_SSL_CTX_set_verify(SSL_CTX *ctx, int mode, SSL_verify_cb callback);
int cr_SSL_CTX_set_default_verify_paths(SSL_CTX *ctx);
int cr_SSL_CTX_load_verify_locations(SSL_CTX *ctx, const char *file, const char *path);
SSL *cr_SSL_new(SSL_CTX *ctx);
void cr_SSL_free(SSL *ssl);
void cr_SSL_set_bio(SSL *ssl, BIO *rbio, BIO *wbio);
void cr_SSL_set_connect_state(SSL *ssl);
int cr_SSL_set1_host(SSL *ssl, const char *hostname);
long cr_SSL_set_tlsext_host_name(SSL *ssl, const char *name);
int cr_SSL_do_handshake(SSL *ssl);
int cr_SSL_get_error(const SSL *ssl, int ret);
int cr_SSL_read(SSL *ssl, void *buf, int num);
int cr_SSL_write(SSL *ssl, const void *buf, int num);
int cr_SSL_shutdown(SSL *ssl);
long cr_SSL_get_verify_result(const SSL *ssl);
/// The peer's chain as DER, certificate `index` of `cr_SSL_peer_chain_count`; the same two-call contract as
/// `i2d_X509` (`out` NULL: the length).
int cr_SSL_peer_chain_count(const SSL *ssl);
int cr_SSL_peer_chain_der(const SSL *ssl, int index, unsigned char **out);
const BIO_METHOD *cr_BIO_s_mem(void);
BIO *cr_BIO_new(const BIO_METHOD *type);
int cr_BIO_free(BIO *bio);
int cr_BIO_write(BIO *bio, const void *data, int length);
int cr_BIO_read(BIO *bio, void *data, int length);
size_t cr_BIO_ctrl_pending(BIO *bio);
const char *cr_X509_verify_cert_error_string(long n);
unsigned long cr_ERR_get_error(void);
void cr_ERR_clear_error(void);
void cr_ERR_error_string_n(unsigned long e, char *buf, size_t len);

static inline uint64_t cr_SSL_OP_NO_COMPRESSION(void) { return SSL_OP_NO_COMPRESSION; }
static inline uint64_t cr_SSL_OP_IGNORE_UNEXPECTED_EOF(void) { return SSL_OP_IGNORE_UNEXPECTED_EOF; }
#endif
#endif
