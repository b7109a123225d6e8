/* tokens: the fixed text-to-token rule shared by the simulator's request
 * accounting, its /tokenize endpoint and the client's prompt estimates. */
#include "model/tokens.h"
#include "common/util.h"

/* ASCII letters and digits, by table (isalnum asks the locale a byte) */
static int is_word_byte(unsigned char c) {
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* Walks the text piece by piece; `emit` gets each token's bytes. */
static size_t walk(const char *text, size_t n, int32_t *ids, size_t cap) {
    const unsigned char *s = (const unsigned char *)text;
    size_t count = 0, i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c == ' ' || c == '\t' || c == '\r') {
            i++;
            continue;
        }
        size_t start = i, len;
        if (is_word_byte(c)) {
            while (i < n && is_word_byte(s[i]))
                i++;
            /* A word costs one token per 4 characters. */
            for (size_t k = start; k < i; k += 4) {
                len = (i - k < 4) ? i - k : 4;
                if (count < cap)
                    ids[count] = (int32_t)(100 + hash_bytes(s + k, len, 7) % 32000);
                count++;
            }
            continue;
        }
        if (c >= 0x80) {
            i++;
            while (i < n && (s[i] & 0xC0) == 0x80)
                i++;
        } else {
            i++;
        }
        if (count < cap)
            ids[count] = (int32_t)(100 + hash_bytes(s + start, i - start, 7) % 32000);
        count++;
    }
    return count;
}

size_t count_text_tokens(const char *text, size_t n) {
    return walk(text, n, NULL, 0);
}

size_t tokenize_text(const char *text, size_t n, int32_t *ids, size_t cap) {
    return walk(text, n, ids, cap);
}
