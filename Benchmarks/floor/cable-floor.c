// cable-floor: the physical floor for SideBySideBenchmark. A minimal Action Cable reader in C (libc only):
// connect, upgrade, subscribe SUBS identifiers, then per text frame find the identifier and message byte ranges,
// look the identifier up, count data messages, stop at the end marker. Usage: cable-floor URL N SUBS
#define _POSIX_C_SOURCE 200809L
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF 65536
#define MAXFRAME (16u << 20)

static void die(const char *m) { fprintf(stderr, "cable-floor: %s\n", m); exit(1); }

static int fd;
static unsigned char *buf;  // receive buffer, grows for large frames
static size_t cap = BUF, len, pos;

static void fill(void) {
    if (pos > 0) { memmove(buf, buf + pos, len - pos); len -= pos; pos = 0; }
    if (len == cap) die("buffer full");
    ssize_t n = recv(fd, buf + len, cap - len, 0);
    if (n <= 0) die("connection closed");
    len += (size_t)n;
}

static void send_all(const void *p, size_t n) {
    const char *c = p;
    while (n > 0) { ssize_t w = send(fd, c, n, 0); if (w <= 0) die("send failed"); c += w; n -= (size_t)w; }
}

static void send_text(const char *s, size_t n) {
    unsigned char h[14]; size_t hl = 0;
    h[hl++] = 0x81;
    if (n < 126) h[hl++] = 0x80 | (unsigned char)n;
    else if (n < 65536) { h[hl++] = 0x80 | 126; h[hl++] = (unsigned char)(n >> 8); h[hl++] = (unsigned char)n; }
    else { h[hl++] = 0x80 | 127; for (int i = 7; i >= 0; i--) h[hl++] = (unsigned char)((uint64_t)n >> (8 * i)); }
    static const unsigned char mask[4] = {0x12, 0x34, 0x56, 0x78};
    memcpy(h + hl, mask, 4); hl += 4;
    unsigned char *f = malloc(hl + n); if (!f) die("out of memory");
    memcpy(f, h, hl);
    for (size_t i = 0; i < n; i++) f[hl + i] = (unsigned char)s[i] ^ mask[i & 3];
    send_all(f, hl + n); free(f);
}

// Next frame: returns opcode, sets *p/*n to payload in buf (valid until next call).
static int next_frame(const unsigned char **p, size_t *n) {
    for (;;) {
        size_t a = len - pos;
        if (a >= 2) {
            const unsigned char *h = buf + pos;
            if (h[1] & 0x80) die("masked server frame");
            uint64_t pl = h[1] & 0x7f; size_t hl = 2;
            if (pl == 126) { if (a < 4) goto more; pl = ((uint64_t)h[2] << 8) | h[3]; hl = 4; }
            else if (pl == 127) { if (a < 10) goto more; pl = 0; for (int i = 0; i < 8; i++) pl = (pl << 8) | h[2 + i]; hl = 10; }
            if (pl > MAXFRAME) die("frame too large");
            if (hl + pl > cap) {
                if (pos > 0) { memmove(buf, buf + pos, len - pos); len -= pos; pos = 0; }
                cap = hl + (size_t)pl; buf = realloc(buf, cap); if (!buf) die("out of memory");
            }
            if (a >= hl + pl) {
                int op = h[0] & 0x0f;
                if (!(h[0] & 0x80)) die("fragmented frame unsupported");
                *p = buf + pos + hl; *n = (size_t)pl; pos += hl + (size_t)pl;
                return op;
            }
        }
    more:
        fill();
    }
}

// Skip a JSON string starting at s[i] == '"'; returns index after closing quote or 0 on error.
static size_t skip_string(const unsigned char *s, size_t n, size_t i) {
    for (i++; i < n; i++) {
        if (s[i] == '\\') { i++; continue; }
        if (s[i] == '"') return i + 1;
    }
    return 0;
}

// Skip a JSON value (object/array balanced, string, or scalar); returns end index or 0.
static size_t skip_value(const unsigned char *s, size_t n, size_t i) {
    if (i >= n) return 0;
    if (s[i] == '"') return skip_string(s, n, i);
    if (s[i] == '{' || s[i] == '[') {
        int depth = 0;
        while (i < n) {
            unsigned char c = s[i];
            if (c == '"') { i = skip_string(s, n, i); if (!i) return 0; continue; }
            if (c == '{' || c == '[') depth++;
            else if (c == '}' || c == ']') { if (--depth == 0) return i + 1; }
            i++;
        }
        return 0;
    }
    while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']') i++;
    return i;
}

static const unsigned char *find(const unsigned char *s, size_t n, const char *k) {
    size_t kl = strlen(k);
    if (n < kl) return NULL;
    for (size_t i = 0; i + kl <= n; i++) if (s[i] == (unsigned char)k[0] && memcmp(s + i, k, kl) == 0) return s + i + kl;
    return NULL;
}

// Top-level keys of one object: identifier string range, message value range, has "type".
typedef struct { size_t is, ie, ms, me; int type, has_id, has_msg; } fields;

static int parse(const unsigned char *s, size_t n, fields *f) {
    memset(f, 0, sizeof *f);
    size_t i = 0;
    while (i < n && s[i] != '{') i++;
    if (i >= n) return 0;
    i++;
    for (;;) {
        while (i < n && (s[i] == ' ' || s[i] == ',' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) i++;
        if (i >= n) return 0;
        if (s[i] == '}') return 1;
        if (s[i] != '"') return 0;
        size_t ks = i + 1, ke = skip_string(s, n, i);
        if (!ke) return 0;
        size_t klen = ke - 1 - ks;
        i = ke;
        while (i < n && (s[i] == ' ' || s[i] == ':')) i++;
        size_t vs = i, ve = skip_value(s, n, i);
        if (!ve) return 0;
        if (klen == 10 && memcmp(s + ks, "identifier", 10) == 0) {
            if (s[vs] != '"') return 0;
            f->is = vs + 1; f->ie = ve - 1; f->has_id = 1;
        } else if (klen == 7 && memcmp(s + ks, "message", 7) == 0) {
            f->ms = vs; f->me = ve; f->has_msg = 1;
        } else if (klen == 4 && memcmp(s + ks, "type", 4) == 0) {
            f->type = 1;
        }
        i = ve;
    }
}

#define HB 4096
static struct { char *s; size_t n; int used; } table[HB];

static uint32_t hash(const unsigned char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) { h ^= s[i]; h *= 16777619u; }
    return h;
}

static void insert(const char *s, size_t n) {
    uint32_t h = hash((const unsigned char *)s, n) & (HB - 1);
    while (table[h].used) h = (h + 1) & (HB - 1);
    table[h].s = malloc(n); if (!table[h].s) die("out of memory");
    memcpy(table[h].s, s, n); table[h].n = n; table[h].used = 1;
}

static int lookup(const unsigned char *s, size_t n) {
    uint32_t h = hash(s, n) & (HB - 1);
    while (table[h].used) {
        if (table[h].n == n && memcmp(table[h].s, s, n) == 0) return 1;
        h = (h + 1) & (HB - 1);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) die("usage: cable-floor ws://HOST:PORT/PATH N SUBS");
    long total = strtol(argv[2], NULL, 10), subs = strtol(argv[3], NULL, 10);
    if (total < 0 || subs < 1 || subs > 2000) die("bad N or SUBS");
    const char *url = argv[1];
    if (strncmp(url, "ws://", 5) != 0) die("URL must start with ws://");
    char host[256], port[16] = "80", path[512] = "/";
    const char *hp = url + 5, *slash = strchr(hp, '/');
    size_t hpl = slash ? (size_t)(slash - hp) : strlen(hp);
    if (hpl >= sizeof host) die("host too long");
    memcpy(host, hp, hpl); host[hpl] = 0;
    char *colon = strchr(host, ':');
    if (colon) { *colon = 0; if (strlen(colon + 1) >= sizeof port) die("bad port"); strcpy(port, colon + 1); }
    if (slash) { if (strlen(slash) >= sizeof path) die("path too long"); strcpy(path, slash); }

    struct addrinfo hints = {0}, *ai;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &ai) != 0) die("cannot resolve host");
    fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) die("cannot connect");
    freeaddrinfo(ai);
    int one = 1; setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    buf = malloc(cap); if (!buf) die("out of memory");

    char req[1024];
    int rl = snprintf(req, sizeof req,
        "GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Protocol: actioncable-v1-json\r\nOrigin: http://%s:%s\r\n\r\n", path, host, port, host, port);
    if (rl <= 0 || (size_t)rl >= sizeof req) die("request too long");
    send_all(req, (size_t)rl);
    for (;;) {
        const unsigned char *e = len >= 4 ? find(buf, len, "\r\n\r\n") : NULL;
        if (e) {
            if (len < 12 || memcmp(buf + 9, "101", 3) != 0) die("upgrade refused (status not 101)");
            pos = (size_t)(e - buf);
            break;
        }
        fill();
    }

    char msg[256], id[128];
    for (long i = 0; i < subs; i++) {
        int ml = snprintf(msg, sizeof msg,
            "{\"command\":\"subscribe\",\"identifier\":\"{\\\"channel\\\":\\\"BenchChannel\\\",\\\"sub\\\":%ld}\"}", i);
        send_text(msg, (size_t)ml);
    }
    // Identifiers arrive JSON-escaped inside the frame; store the escaped form for lookup.
    for (long i = 0; i < subs; i++) {
        int il = snprintf(id, sizeof id, "{\\\"channel\\\":\\\"BenchChannel\\\",\\\"sub\\\":%ld}", i);
        insert(id, (size_t)il);
    }

    const unsigned char *p; size_t n; fields f;
    long confirmed = 0;
    while (confirmed < subs) {
        int op = next_frame(&p, &n);
        if (op == 8) die("closed during subscribe");
        if (op != 1) continue;
        if (find(p, n, "\"confirm_subscription\"")) confirmed++;
        else if (find(p, n, "\"reject_subscription\"")) die("subscription rejected");
    }

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long count = 0;
    for (;;) {
        int op = next_frame(&p, &n);
        if (op == 8) die("connection closed by server");
        if (op != 1) continue;
        if (!parse(p, n, &f)) die("malformed frame");
        if (f.type) continue;
        if (!f.has_id || !f.has_msg) die("frame without identifier or message");
        if (!lookup(p + f.is, f.ie - f.is)) die("unknown identifier");
        if (f.me - f.ms == 12 && memcmp(p + f.ms, "{\"end\":true}", 12) == 0) break;
        count++;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("received %ld in %.3f s\n", count, secs);
    fflush(stdout);
    close(fd);
    return count == total ? 0 : 1;
}
