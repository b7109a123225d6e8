/* transcripts: reading and rebuilding the recorded llama.cpp exchanges
 * (see transcripts.h). */
#include "transcripts.h"
#include "support.h"
#include "test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DIR_PATH "tests/data/transcripts/llama.cpp-server/"

/* The recorded head without its Content-Length, then the body framed again. */
static char *rebuild(char *head, const char *body, size_t blen, size_t *len, int *chunked) {
    char *answer = malloc(strlen(head) + blen * 2 + 4096), *w = answer;
    *chunked = strcasestr(head, "\r\nTransfer-Encoding: chunked\r\n") != NULL;
    char *end = strstr(head, "\r\n\r\n");
    CHECK(end != NULL);
    end[2] = 0;
    for (char *line = head; *line;) {
        size_t ll = (size_t)(strstr(line, "\r\n") - line) + 2;
        if (strncasecmp(line, "Content-Length:", 15))
            w += sprintf(w, "%.*s", (int)ll, line);
        line += ll;
    }
    if (*chunked) {
        w += sprintf(w, "\r\n");
        for (size_t off = 0; off < blen; off += 100) {
            size_t k = blen - off < 100 ? blen - off : 100;
            w += sprintf(w, "%zx\r\n", k);
            memcpy(w, body + off, k);
            w += k;
            w += sprintf(w, "\r\n");
        }
        w += sprintf(w, "0\r\n\r\n");
    } else {
        w += sprintf(w, "Content-Length: %zu\r\n\r\n", blen);
        memcpy(w, body, blen);
        w += blen;
    }
    *w = 0;
    *len = (size_t)(w - answer);
    return answer;
}

int transcripts_each(void (*fn)(const transcript *t, void *arg), void *arg) {
    DIR *d = opendir(DIR_PATH);
    CHECK_MSG(d != NULL, "no %s", DIR_PATH);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t nl = strlen(e->d_name);
        if (nl < 13 || strcmp(e->d_name + nl - 12, ".headers.txt"))
            continue;
        char path[1024], stem[512];
        snprintf(stem, sizeof stem, "%.*s", (int)(nl - 12), e->d_name);
        snprintf(path, sizeof path, "%s%s.headers.txt", DIR_PATH, stem);
        char *head = read_file(path, NULL);
        snprintf(path, sizeof path, "%s%s.body.txt", DIR_PATH, stem);
        size_t blen = 0;
        char *body = read_file(path, &blen);
        CHECK_MSG(head && body, "%s: head or body missing", stem);
        transcript t = {.stem = stem, .status = atoi(head + 9), .body = body, .body_len = blen};
        char *answer = rebuild(head, body, blen, &t.answer_len, &t.chunked);
        t.answer = answer;
        fn(&t, arg);
        free(answer);
        free(head);
        free(body);
        n++;
    }
    closedir(d);
    return n;
}
