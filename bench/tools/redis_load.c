/*
 * redis_load.c — a closed-loop load generator for membership commands on
 * Redis servers (bench/redis/bench_cluster.py): throughput, latency
 * percentiles and the answers' false positives and negatives.
 *
 *   amq_redis_load [-c CONNS] FILE
 *
 * FILE has one request a line, five tab-separated fields:
 *
 *   PORT  COMMAND  KEY  ITEM  TRUTH      e.g. 7100 BF.EXISTS bf{0} k17 0
 *
 * TRUTH is 1 when ITEM is a member. Each port (a server on 127.0.0.1)
 * gets CONNS connections (default 4); its requests are dealt to them in
 * order, and each connection keeps one request in flight, so a latency is
 * one round trip as a client sees it. Every request is sent once. The
 * reply must be an integer (0 or 1) or an error; the first line of output
 * is a JSON object:
 *
 *   requests, seconds, ops (per second), p50_us, p99_us, absent (requests
 *   with TRUTH 0), false_positives (absent answered 1), false_negatives
 *   (members answered 0), errors
 *
 * Routing is the file's: the driver names the port that owns each key.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tool.h"

#define MAX_PORTS 64
#define MAX_CONNS 1024
#define REPLY_MAX 4096

typedef struct {
    int port;
    size_t off, len; /* the request in RESP, in the request buffer */
    int truth;
} request;

typedef struct {
    int fd;
    size_t *queue; /* its requests: indexes into rq, in order */
    size_t n, next;
    double sent;
    char buf[REPLY_MAX];
    size_t have;
} conn;

static void die(const char *what) {
    fprintf(stderr, "amq_redis_load: %s%s%s\n", what, errno ? ": " : "",
            errno ? strerror(errno) : "");
    exit(1);
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        die(path);
    size_t cap = 1 << 20, n = 0;
    char *p = malloc(cap);
    for (;;) {
        if (n == cap && (p = realloc(p, cap *= 2)) == NULL)
            die("out of memory");
        size_t got = fread(p + n, 1, cap - n, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    *len = n;
    return p;
}

/* Append "$len\r\nfield\r\n" to out. */
static size_t bulk(char *out, const char *s, size_t n) {
    size_t k = (size_t)sprintf(out, "$%zu\r\n", n);
    memcpy(out + k, s, n);
    memcpy(out + k + n, "\r\n", 2);
    return k + n + 2;
}

static int connect_to(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        die("socket");
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void send_next(conn *c, const request *rq, const char *wire) {
    const request *r = &rq[c->queue[c->next]];
    size_t done = 0;
    c->sent = tool_now();
    while (done < r->len) {
        ssize_t w = write(c->fd, wire + r->off + done, r->len - done);
        if (w < 0 && errno != EINTR)
            die("write");
        if (w > 0)
            done += (size_t)w;
    }
}

int main(int argc, char **argv) {
    int per_port = 4;
    int ai = 1;
    if (ai + 1 < argc && strcmp(argv[ai], "-c") == 0) {
        per_port = atoi(argv[ai + 1]);
        ai += 2;
    }
    if (ai + 1 != argc || per_port < 1 || per_port > 64) {
        fprintf(stderr, "usage: amq_redis_load [-c CONNS 1..64] FILE\n");
        return 2;
    }
    size_t len;
    char *text = slurp(argv[ai], &len);

    /* parse the lines and build every request's RESP bytes */
    size_t nreq = 0, cap = 1024;
    request *rq = malloc(cap * sizeof *rq);
    char *wire =
        malloc(4 * len + 64); /* RESP adds at most 25 bytes to a 10-byte line */
    size_t wlen = 0;
    for (char *p = text; p < text + len;) {
        char *eol = memchr(p, '\n', (size_t)(text + len - p));
        if (eol == NULL)
            eol = text + len;
        char *f[5];
        size_t fl[5];
        int nf = 0;
        for (char *q = p; nf < 5 && q <= eol; nf++) {
            char *t = memchr(q, '\t', (size_t)(eol - q));
            char *end = t ? t : eol;
            f[nf] = q;
            fl[nf] = (size_t)(end - q);
            q = end + 1;
        }
        if (eol > p) {
            if (nf != 5) {
                errno = 0;
                die("a line needs PORT COMMAND KEY ITEM TRUTH, tab-separated");
            }
            if (nreq == cap &&
                (rq = realloc(rq, (cap *= 2) * sizeof *rq)) == NULL)
                die("out of memory");
            request *r = &rq[nreq++];
            r->port = atoi(f[0]);
            r->truth = f[4][0] == '1';
            r->off = wlen;
            memcpy(wire + wlen, "*3\r\n", 4);
            wlen += 4;
            for (int i = 1; i <= 3; i++)
                wlen += bulk(wire + wlen, f[i], fl[i]);
            r->len = wlen - r->off;
        }
        p = eol + 1;
    }
    if (nreq == 0) {
        errno = 0;
        die("no requests");
    }

    /* connections: per_port for each distinct port, requests dealt out */
    int ports[MAX_PORTS], nports = 0;
    for (size_t i = 0; i < nreq; i++) {
        int k = 0;
        while (k < nports && ports[k] != rq[i].port)
            k++;
        if (k == nports) {
            if (nports == MAX_PORTS) {
                errno = 0;
                die("more than 64 ports");
            }
            ports[nports++] = rq[i].port;
        }
    }
    int nconn = nports * per_port;
    conn *cs = calloc((size_t)nconn, sizeof *cs);
    size_t *dealt = calloc((size_t)nports, sizeof *dealt);
    for (int k = 0; k < nconn; k++) {
        cs[k].fd = connect_to(ports[k / per_port]);
        cs[k].queue = malloc(nreq * sizeof(size_t));
    }
    for (size_t i = 0; i < nreq; i++) {
        int k = 0;
        while (ports[k] != rq[i].port)
            k++;
        conn *c = &cs[k * per_port + (int)(dealt[k]++ % (size_t)per_port)];
        c->queue[c->n++] = i;
    }

    double *lat = malloc(nreq * sizeof *lat);
    size_t nlat = 0, absent = 0, fp = 0, fn = 0, errs = 0;
    struct pollfd *pf = calloc((size_t)nconn, sizeof *pf);
    int *who = calloc((size_t)nconn, sizeof *who);
    double t0 = tool_now();
    for (int k = 0; k < nconn; k++)
        if (cs[k].n > 0)
            send_next(&cs[k], rq, wire);
    for (;;) {
        int np = 0;
        for (int k = 0; k < nconn; k++)
            if (cs[k].next < cs[k].n) {
                pf[np] = (struct pollfd){.fd = cs[k].fd, .events = POLLIN};
                who[np++] = k;
            }
        if (np == 0)
            break;
        if (poll(pf, (nfds_t)np, 10000) <= 0)
            die("poll (a server stopped answering?)");
        for (int j = 0; j < np; j++) {
            if (!(pf[j].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            conn *c = &cs[who[j]];
            ssize_t got = read(c->fd, c->buf + c->have, REPLY_MAX - c->have);
            if (got <= 0) {
                if (got < 0 && errno == EINTR)
                    continue;
                die("read (the server closed the connection)");
            }
            c->have += (size_t)got;
            char *crlf = memchr(c->buf, '\n', c->have);
            if (crlf == NULL) {
                if (c->have == REPLY_MAX) {
                    errno = 0;
                    die("a reply longer than a line");
                }
                continue;
            }
            const request *r = &rq[c->queue[c->next]];
            lat[nlat++] = tool_now() - c->sent;
            if (c->buf[0] == ':') {
                int one = atoi(c->buf + 1) != 0;
                absent += !r->truth;
                fp += !r->truth && one;
                fn += r->truth && !one;
            } else {
                if (errs == 0)
                    fprintf(stderr, "amq_redis_load: reply %.*s\n",
                            (int)(crlf - c->buf), c->buf);
                errs++;
            }
            c->have = 0;
            if (++c->next < c->n)
                send_next(c, rq, wire);
        }
    }
    double secs = tool_now() - t0;
    qsort(lat, nlat, sizeof *lat, cmp_double);
    printf("{\"requests\": %zu, \"seconds\": %.6f, \"ops\": %.1f, "
           "\"p50_us\": %.2f, \"p99_us\": %.2f, \"absent\": %zu, "
           "\"false_positives\": %zu, \"false_negatives\": %zu, "
           "\"errors\": %zu}\n",
           nreq, secs, (double)nreq / secs, 1e6 * lat[nlat / 2],
           1e6 * lat[(size_t)((double)nlat * 0.99)], absent, fp, fn, errs);
    for (int k = 0; k < nconn; k++) {
        close(cs[k].fd);
        free(cs[k].queue);
    }
    free(cs);
    free(dealt);
    free(pf);
    free(who);
    free(lat);
    free(rq);
    free(wire);
    free(text);
    return errs ? 1 : 0;
}
