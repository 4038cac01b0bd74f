// The physical floor for SideBySideBenchmark and LatencyBenchmark: the least work an honest Action Cable reader
// can do, in plain C (C11, POSIX, libc only), so that a client's rate, latency and CPU per message can be read
// against what the loopback, the core and the bytes allow.
//
//     cc -O2 -o cable-floor Benchmarks/floor/cable-floor.c
//     cable-floor ws://127.0.0.1:PORT/cable N SUBS            (throughput)
//     cable-floor ws://127.0.0.1:PORT/cable N SUBS latency    (latency, against `CableBenchServer N SUBS 64 RATE`)
//
// Same contract as CableBench and js/cable-bench.js: subscribes SUBS identifiers
// {"channel":"BenchChannel","sub":i}, starts the clock (CLOCK_MONOTONIC) once all are confirmed, counts data
// messages over all subscriptions and stops at the one {"end":true} message. Prints
// `received <count> in <seconds> s`; exits 0 when count == N, 1 on any bad input (with a message on stderr),
// 2 for bad arguments.
//
// Per text frame it does what any reader must: parses the WebSocket frame (64 KiB recv, frames split across
// reads), finds the top-level "identifier" string and "message" value by scanning the JSON's structure
// (strings with their escapes, balanced braces and brackets), looks the identifier's bytes up in a hash table
// of the identifiers it subscribed, and counts one message for that subscription. What it leaves out, and a
// real client must not: UTF-8 validation, unescaping the identifier (it compares the escaped bytes, as the
// server echoes them), decoding the message into values, fragmented messages (rejected; Action Cable servers
// do not send them), answering pings, and a random masking key and Sec-WebSocket-Key.
//
// Latency mode: the contract of CableBench's latency mode and js/cable-latency.js. Every data message's message
// object is {"t":<CLOCK_MONOTONIC ns at send>,"pad":"…"} (CableWorkload.stampedMessage); right after a data
// frame's JSON is scanned the reader reads CLOCK_MONOTONIC, finds the message object's top-level "t" member
// (scanning its members as above) and records now - t (0 if negative) in the 1,024-bucket log-linear histogram
// of Benchmarks/BenchSupport/LatencyHistogram.swift (same buckets, quantiles and fractions; change all three
// together). A message whose t is not a non-negative integer counts as unstamped. CPU and context switches are
// getrusage(RUSAGE_SELF) from every subscription confirmed to the end marker. Prints LatencySummary's two lines
//
//     latency count=N p50=… p99=… p999=… max=… cpu=… nvcsw=… nivcsw=…
//     dist <50us:… <100us:… <250us:… <500us:… <1ms:… <10ms:… >=10ms:…
//
// and exits 0 when N stamped messages arrived and none was unstamped, 1 otherwise, 2 for bad arguments.

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { RECV_SIZE = 64 * 1024, MAX_PAYLOAD = 64 * 1024 * 1024, MAX_DEPTH = 64 };

static _Noreturn void die(const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    fputs("cable-floor: ", stderr);
    vfprintf(stderr, format, arguments);
    fputc('\n', stderr);
    va_end(arguments);
    exit(1);
}

static void *allocate(size_t size) {
    void *memory = malloc(size);
    if (memory == NULL) die("out of memory");
    return memory;
}

static double now(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (double)time.tv_sec + (double)time.tv_nsec / 1e9;
}

static uint64_t monotonic_nanoseconds(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (uint64_t)time.tv_sec * 1000000000u + (uint64_t)time.tv_nsec;
}

// MARK: Latency: LatencyHistogram's layout. Exact below 64 ns, then 32 buckets per power of two up to 2^36 ns;
// the last bucket holds the rest. Bucket i >= 64 starts at (32 + i % 32) << (i / 32 - 1), 1 << (i / 32 - 1) wide.

enum { BUCKETS = 1024 };

static long long histogram[BUCKETS];
static long long histogram_count, unstamped;
static uint64_t histogram_max;

static int bucket_of(uint64_t value) {
    if (value < 32) return (int)value;
    if (value >= (uint64_t)1 << 36) return BUCKETS - 1;
    int exponent = 0;  // the index of the highest set bit: 5...35
    for (int shift = 32; shift > 0; shift /= 2) {
        if (value >> exponent >> shift) exponent += shift;
    }
    return (exponent - 5) * 32 + (int)(value >> (exponent - 5));
}

static uint64_t lower_bound(int index) {
    return index < 64 ? (uint64_t)index : (uint64_t)(32 + index % 32) << (index / 32 - 1);
}

static uint64_t width(int index) { return index < 64 ? 1 : (uint64_t)1 << (index / 32 - 1); }

static void record(uint64_t value) {
    histogram[bucket_of(value)]++;
    histogram_count++;
    if (value > histogram_max) histogram_max = value;
}

// The highest value of the first bucket whose running count reaches ceil(q × count), never above the maximum.
static uint64_t quantile(double q) {
    if (histogram_count == 0) return 0;
    double exact = q * (double)histogram_count;
    long long rank = (long long)exact;
    if ((double)rank < exact) rank++;  // ceil without libm
    if (rank < 1) rank = 1;
    long long running = 0;
    for (int index = 0; index < BUCKETS; index++) {
        running += histogram[index];
        if (running >= rank) {
            uint64_t top = lower_bound(index) + width(index) - 1;
            return top < histogram_max ? top : histogram_max;
        }
    }
    return histogram_max;
}

// The fraction of values below threshold ns; a bucket that straddles it counts in proportion.
static double fraction_below(uint64_t threshold) {
    if (histogram_count == 0) return 0;
    double below = 0;
    for (int index = 0; index < BUCKETS; index++) {
        if (histogram[index] == 0) continue;
        uint64_t lower = lower_bound(index), size = width(index);
        if (lower + size <= threshold) {
            below += (double)histogram[index];
        } else if (lower < threshold) {
            below += (double)histogram[index] * (double)(threshold - lower) / (double)size;
        }
    }
    return below / (double)histogram_count;
}

// As LatencySummary.microseconds: one decimal, rounded half up from whole nanoseconds.
static void print_microseconds(const char *name, uint64_t nanoseconds) {
    uint64_t tenths = (nanoseconds + 50) / 100;
    printf(" %s=%llu.%llu", name, (unsigned long long)(tenths / 10), (unsigned long long)(tenths % 10));
}

// As LatencySummary.fraction: clamped to 0...1, four decimals, rounded half away from zero (Swift's rounded()).
static void print_fraction(const char *label, double value) {
    double scaled = (value < 0 ? 0 : value > 1 ? 1 : value) * 10000;
    long long whole = (long long)scaled;
    if (scaled - (double)whole >= 0.5) whole++;
    printf("%s:%lld.%04lld", label, whole / 10000, whole % 10000);
}

static struct rusage usage_start;

static struct rusage resource_usage(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) die("getrusage: %s", strerror(errno));
    return usage;
}

static long long cpu_microseconds(const struct rusage *usage) {
    return ((long long)usage->ru_utime.tv_sec + usage->ru_stime.tv_sec) * 1000000 + usage->ru_utime.tv_usec +
           usage->ru_stime.tv_usec;
}

static void print_latency(const struct rusage *end) {
    long long cpu = cpu_microseconds(end) - cpu_microseconds(&usage_start);
    printf("latency count=%lld", histogram_count);
    print_microseconds("p50", quantile(0.5));
    print_microseconds("p99", quantile(0.99));
    print_microseconds("p999", quantile(0.999));
    print_microseconds("max", histogram_max);
    printf(" cpu=%lld.%06lld nvcsw=%ld nivcsw=%ld\ndist ", cpu / 1000000, cpu % 1000000,
           end->ru_nvcsw - usage_start.ru_nvcsw, end->ru_nivcsw - usage_start.ru_nivcsw);
    static const struct {
        const char *label;
        uint64_t nanoseconds;
    } thresholds[] = {{"<50us", 50000},   {"<100us", 100000}, {"<250us", 250000},
                      {"<500us", 500000}, {"<1ms", 1000000},  {"<10ms", 10000000}};
    double below = 0;
    for (size_t index = 0; index < sizeof thresholds / sizeof *thresholds; index++) {
        below = fraction_below(thresholds[index].nanoseconds);
        print_fraction(thresholds[index].label, below);
        putchar(' ');
    }
    print_fraction(">=10ms", histogram_count > 0 ? 1 - below : 0);
    putchar('\n');
}

// MARK: Subscriptions: the identifiers sent, by their escaped bytes, in an open-addressing hash table.

struct subscription {
    char *identifier;  // escaped, as inside the JSON string literal
    size_t length;
    long long count;
    int confirmed;
};

static struct subscription *subscriptions;
static int subscription_count;
static int *slots;  // index into subscriptions, or -1
static size_t slot_mask;

static uint64_t hash(const char *bytes, size_t length) {
    uint64_t value = 14695981039346656037u;  // FNV-1a
    for (size_t index = 0; index < length; index++) value = (value ^ (uint8_t)bytes[index]) * 1099511628211u;
    return value;
}

static struct subscription *lookup(const char *identifier, size_t length) {
    for (size_t slot = hash(identifier, length) & slot_mask;; slot = (slot + 1) & slot_mask) {
        if (slots[slot] < 0) return NULL;
        struct subscription *candidate = &subscriptions[slots[slot]];
        if (candidate->length == length && memcmp(candidate->identifier, identifier, length) == 0) return candidate;
    }
}

static void make_subscriptions(int count) {
    subscription_count = count;
    subscriptions = allocate(sizeof *subscriptions * (size_t)count);
    size_t slot_count = 16;
    while (slot_count < 2 * (size_t)count) slot_count *= 2;
    slot_mask = slot_count - 1;
    slots = allocate(sizeof *slots * slot_count);
    for (size_t slot = 0; slot < slot_count; slot++) slots[slot] = -1;
    for (int index = 0; index < count; index++) {
        char text[64];
        int length = snprintf(text, sizeof text, "{\\\"channel\\\":\\\"BenchChannel\\\",\\\"sub\\\":%d}", index);
        struct subscription *subscription = &subscriptions[index];
        *subscription = (struct subscription){.identifier = strdup(text), .length = (size_t)length};
        if (subscription->identifier == NULL) die("out of memory");
        size_t slot = hash(text, (size_t)length) & slot_mask;
        while (slots[slot] >= 0) slot = (slot + 1) & slot_mask;
        slots[slot] = index;
    }
}

// MARK: JSON: byte ranges only. Each skip takes the first byte of a value and returns the byte after it, or NULL.

static const char *skip_space(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

// p is at the opening quote. A quote closes the string unless an odd number of backslashes precede it.
static const char *skip_string(const char *p, const char *end) {
    const char *content = p + 1;
    for (const char *from = content;;) {
        const char *quote = memchr(from, '"', (size_t)(end - from));
        if (quote == NULL) return NULL;
        size_t backslashes = 0;
        while (quote - backslashes > content && *(quote - 1 - backslashes) == '\\') backslashes++;
        if (backslashes % 2 == 0) return quote + 1;
        from = quote + 1;
    }
}

static const char *skip_value(const char *p, const char *end) {
    if (p == end) return NULL;
    if (*p == '"') return skip_string(p, end);
    if (*p != '{' && *p != '[') {  // a number, true, false or null: up to the next delimiter
        const char *start = p;
        while (p < end && strchr(",}] \t\r\n", *p) == NULL) p++;
        return p > start ? p : NULL;
    }
    char closers[MAX_DEPTH];
    int depth = 0;
    while (p < end) {
        switch (*p) {
        case '"':
            if ((p = skip_string(p, end)) == NULL) return NULL;
            continue;
        case '{':
        case '[':
            if (depth == MAX_DEPTH) return NULL;
            closers[depth++] = *p == '{' ? '}' : ']';
            break;
        case '}':
        case ']':
            if (depth == 0 || closers[--depth] != *p) return NULL;
            if (depth == 0) return p + 1;
            break;
        }
        p++;
    }
    return NULL;
}

struct range {
    const char *start;
    size_t length;
};

static int equals(struct range range, const char *text) {
    return range.start != NULL && range.length == strlen(text) && memcmp(range.start, text, range.length) == 0;
}

struct frame_fields {
    struct range identifier, message, type;  // identifier and type without their quotes
};

// Reads one object member at *p, `"key": value`, into key (without its quotes) and value, and moves *p past
// it; 0 if it is malformed.
static int scan_member(const char **p, const char *end, struct range *key, struct range *value) {
    const char *at = *p;
    if (at == end || *at != '"') return 0;
    const char *key_end = skip_string(at, end);
    if (key_end == NULL) return 0;
    *key = (struct range){at + 1, (size_t)(key_end - at - 2)};
    at = skip_space(key_end, end);
    if (at == end || *at++ != ':') return 0;
    const char *start = skip_space(at, end);
    if ((at = skip_value(start, end)) == NULL) return 0;
    *value = (struct range){start, (size_t)(at - start)};
    *p = at;
    return 1;
}

// Scans one top-level JSON object for its "identifier", "message" and "type" members; 0 if it is malformed.
static int scan_object(const char *p, const char *end, struct frame_fields *fields) {
    *fields = (struct frame_fields){0};
    p = skip_space(p, end);
    if (p == end || *p++ != '{') return 0;
    p = skip_space(p, end);
    if (p < end && *p == '}') return skip_space(p + 1, end) == end;
    for (;;) {
        struct range key, whole;
        if (!scan_member(&p, end, &key, &whole)) return 0;
        const char *value = whole.start;
        struct range inner = {value + 1, whole.length - 2};
        if (equals(key, "identifier")) {
            if (*value != '"') return 0;
            fields->identifier = inner;
        } else if (equals(key, "message")) {
            fields->message = whole;
        } else if (equals(key, "type")) {
            if (*value != '"') return 0;
            fields->type = inner;
        }
        p = skip_space(p, end);
        if (p == end) return 0;
        if (*p == '}') return skip_space(p + 1, end) == end;
        if (*p++ != ',') return 0;
        p = skip_space(p, end);
    }
}

// The message object's top-level "t" member as a non-negative integer (at most INT64_MAX, as CableBench reads
// it), scanning the members as scan_object does; 0 when it is missing or not such an integer.
static int stamp_of(struct range message, uint64_t *t) {
    const char *p = message.start, *end = message.start + message.length;
    if (*p++ != '{') return 0;
    p = skip_space(p, end);
    while (p < end && *p == '"') {
        struct range key, value;
        if (!scan_member(&p, end, &key, &value)) return 0;
        if (equals(key, "t")) {
            uint64_t number = 0;
            for (const char *digit = value.start; digit < value.start + value.length; digit++) {
                if (*digit < '0' || *digit > '9' || number > (INT64_MAX - (uint64_t)(*digit - '0')) / 10) return 0;
                number = number * 10 + (uint64_t)(*digit - '0');
            }
            *t = number;
            return 1;
        }
        p = skip_space(p, end);
        if (p == end || *p++ != ',') return 0;
        p = skip_space(p, end);
    }
    return 0;
}

// MARK: The connection.

static int fd;
static long long received;
static int confirmed;
static double started;
static int latency_mode;

static void send_all(const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t sent = send(fd, bytes, length, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) die("send: %s", strerror(errno));
        bytes += sent;
        length -= (size_t)sent;
    }
}

// Appends a masked client text frame (fixed masking key) to out, which has room for length + 8 bytes.
static size_t put_client_text(char *out, const char *payload, size_t length) {
    static const uint8_t key[4] = {0x37, 0xfa, 0x21, 0x3d};
    size_t header = 0;
    out[header++] = (char)0x81;
    if (length < 126) {
        out[header++] = (char)(0x80 | length);
    } else {  // the commands here are far below 64 KiB
        out[header++] = (char)(0x80 | 126);
        out[header++] = (char)(length >> 8);
        out[header++] = (char)(length & 0xff);
    }
    memcpy(out + header, key, 4);
    header += 4;
    for (size_t index = 0; index < length; index++) out[header + index] = (char)(payload[index] ^ key[index % 4]);
    return header + length;
}

static void subscribe_all(void) {
    size_t capacity = (size_t)subscription_count * 128;
    char *frames = allocate(capacity), *command = allocate(128);
    size_t length = 0;
    for (int index = 0; index < subscription_count; index++) {
        int size = snprintf(command, 128, "{\"command\":\"subscribe\",\"identifier\":\"%s\"}",
                            subscriptions[index].identifier);
        if (size < 0 || size + 8 > 128) die("subscribe command too long");
        length += put_client_text(frames + length, command, (size_t)size);
    }
    send_all(frames, length);
    free(frames);
    free(command);
}

// One text message. Returns 1 at the end marker.
static int handle_text(const char *payload, size_t length) {
    struct frame_fields fields;
    if (!scan_object(payload, payload + length, &fields)) {
        die("malformed JSON: %.*s", (int)(length < 200 ? length : 200), payload);
    }
    if (fields.type.start != NULL) {
        if (equals(fields.type, "welcome")) {
            subscribe_all();
        } else if (equals(fields.type, "confirm_subscription")) {
            struct subscription *subscription = lookup(fields.identifier.start, fields.identifier.length);
            if (subscription == NULL) die("confirmation for an unknown identifier");
            if (!subscription->confirmed) {
                subscription->confirmed = 1;
                if (++confirmed == subscription_count) {
                    started = now();
                    if (latency_mode) usage_start = resource_usage();
                }
            }
        } else if (equals(fields.type, "reject_subscription") || equals(fields.type, "disconnect")) {
            die("server sent %.*s", (int)length, payload);
        }  // ping and anything else: skipped
        return 0;
    }
    if (fields.identifier.start == NULL || fields.message.start == NULL) die("message without identifier");
    struct subscription *subscription = lookup(fields.identifier.start, fields.identifier.length);
    if (subscription == NULL) die("message for an unknown identifier");
    if (equals(fields.message, "{\"end\":true}")) {
        if (confirmed < subscription_count) die("end marker before every subscription was confirmed");
        if (latency_mode) {
            struct rusage usage_end = resource_usage();
            print_latency(&usage_end);
        }
        return 1;
    }
    subscription->count++;
    received++;
    if (latency_mode) {
        uint64_t now = monotonic_nanoseconds(), t;
        if (stamp_of(fields.message, &t)) {
            record(now > t ? now - t : 0);
        } else {
            unstamped++;
        }
    }
    return 0;
}

// The length of the whole frame at bytes if it is buffered, else 0. Handles the text frames; rejects what a
// server must not send.
static size_t take_frame(const uint8_t *bytes, size_t available, int *at_end) {
    if (available < 2) return 0;
    int fin = bytes[0] & 0x80, opcode = bytes[0] & 0x0f;
    if (bytes[0] & 0x70) die("reserved bits set (no extension was negotiated)");
    if (bytes[1] & 0x80) die("masked frame from the server");
    uint64_t length = bytes[1] & 0x7f;
    size_t header = 2;
    if (length == 126) {
        if (available < 4) return 0;
        length = (uint64_t)bytes[2] << 8 | bytes[3];
        header = 4;
    } else if (length == 127) {
        if (available < 10) return 0;
        length = 0;
        for (int index = 2; index < 10; index++) length = length << 8 | bytes[index];
        header = 10;
    }
    if (length > MAX_PAYLOAD) die("frame of %llu bytes", (unsigned long long)length);
    if (opcode >= 8 && (!fin || length > 125)) die("fragmented or oversized control frame");
    if (available - header < length) return 0;
    const char *payload = (const char *)bytes + header;
    switch (opcode) {
    case 0x1:
        if (!fin) die("fragmented message");
        *at_end = handle_text(payload, (size_t)length);
        break;
    case 0x8: die("server closed the connection");
    case 0x9:
    case 0xa: break;  // pings are not answered
    case 0x0: die("continuation without a message");
    default: die("unexpected opcode %d", opcode);
    }
    return header + (size_t)length;
}

static int connect_to(const char *url, char *host, size_t host_size, char *target, size_t target_size) {
    if (strncmp(url, "ws://", 5) != 0) die("only ws:// URLs: %s", url);
    const char *authority = url + 5, *slash = strchr(authority, '/');
    size_t authority_length = slash ? (size_t)(slash - authority) : strlen(authority);
    if (authority_length == 0 || authority_length >= host_size) die("bad URL %s", url);
    memcpy(host, authority, authority_length);
    host[authority_length] = 0;
    snprintf(target, target_size, "%s", slash ? slash : "/");
    char name[256];
    snprintf(name, sizeof name, "%s", host);
    char *colon = strrchr(name, ':');
    if (colon) *colon = 0;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *addresses;
    int error = getaddrinfo(name, colon ? colon + 1 : "80", &hints, &addresses);
    if (error != 0) die("%s: %s", name, gai_strerror(error));
    int socket_fd = -1;
    for (struct addrinfo *address = addresses; address != NULL && socket_fd < 0; address = address->ai_next) {
        socket_fd = socket(address->ai_family, address->ai_socktype, address->ai_protocol);
        if (socket_fd >= 0 && connect(socket_fd, address->ai_addr, address->ai_addrlen) != 0) {
            close(socket_fd);
            socket_fd = -1;
        }
    }
    freeaddrinfo(addresses);
    if (socket_fd < 0) die("connect to %s: %s", host, strerror(errno));
    return socket_fd;
}

int main(int argc, char **argv) {
    char *end_n, *end_subs;
    int valid = argc == 4 || (argc == 5 && strcmp(argv[4], "latency") == 0);
    long long expected = valid ? strtoll(argv[2], &end_n, 10) : -1;
    long subs = valid ? strtol(argv[3], &end_subs, 10) : 0;
    if (!valid || *end_n != 0 || *end_subs != 0 || expected < 0 || subs < 1 || subs > 1000000) {
        fputs("usage: cable-floor URL N SUBS [latency]\n", stderr);
        return 2;
    }
    latency_mode = argc == 5;
    make_subscriptions((int)subs);
    char host[256], target[1024];
    fd = connect_to(argv[1], host, sizeof host, target, sizeof target);
    char request[2048];
    int request_length = snprintf(request, sizeof request,
                                  "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                                  "Sec-WebSocket-Protocol: actioncable-v1-json\r\n\r\n",
                                  target, host);
    send_all(request, (size_t)request_length);

    // One buffer for the response head and then the frames: [start, fill) is unread.
    size_t capacity = 4 * RECV_SIZE, start = 0, fill = 0;
    char *buffer = allocate(capacity + 1);  // + 1: the head is read as a C string
    int upgraded = 0, at_end = 0;
    while (!at_end) {
        if (capacity - fill < RECV_SIZE) {  // make room: drop what was read, then grow if a frame needs it
            memmove(buffer, buffer + start, fill - start);
            fill -= start;
            start = 0;
            if (capacity - fill < RECV_SIZE) {
                capacity *= 2;
                if ((buffer = realloc(buffer, capacity + 1)) == NULL) die("out of memory");
            }
        }
        ssize_t count = recv(fd, buffer + fill, RECV_SIZE, 0);
        if (count < 0 && errno == EINTR) continue;
        if (count < 0) die("recv: %s", strerror(errno));
        if (count == 0) die("connection closed before the end marker (%lld messages)", received);
        fill += (size_t)count;
        if (!upgraded) {  // the head: status 101 and the accept value for the fixed key
            buffer[fill] = 0;
            char *head_end = strstr(buffer, "\r\n\r\n");
            if (head_end == NULL) {
                if (fill > 16384) die("response head too long");
                continue;
            }
            *head_end = 0;
            if (strncmp(buffer, "HTTP/1.1 101 ", 13) != 0) die("upgrade refused: %s", buffer);
            if (strstr(buffer, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=") == NULL) die("wrong Sec-WebSocket-Accept");
            start = (size_t)(head_end + 4 - buffer);
            upgraded = 1;
        }
        size_t length;
        while (!at_end && (length = take_frame((uint8_t *)buffer + start, fill - start, &at_end)) > 0) start += length;
        if (start == fill) start = fill = 0;
    }
    if (!latency_mode) printf("received %lld in %.6f s\n", received, now() - started);
    free(buffer);
    close(fd);
    if (!latency_mode) return received == expected ? 0 : 1;
    if (unstamped > 0) fprintf(stderr, "cable-floor: %lld unstamped messages\n", unstamped);
    return histogram_count == expected && unstamped == 0 ? 0 : 1;
}
