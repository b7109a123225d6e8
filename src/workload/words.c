/* words: the word sources (see words.h). The common words are short (at
 * most 4 letters, so one token by servelab's rule too) and frequent in
 * English text, where a BPE vocabulary almost always holds them whole
 * with their leading space. */
#include "workload/words.h"

const char *const common_words[] = {
    "the",  "of",   "and",  "to",   "in",   "is",   "it",   "you",  "that", "he",   "was",  "for",
    "on",   "are",  "as",   "with", "his",  "they", "at",   "be",   "this", "have", "from", "or",
    "one",  "had",  "by",   "but",  "not",  "what", "all",  "were", "we",   "when", "your", "can",
    "said", "use",  "an",   "each", "she",  "do",   "how",  "if",   "will", "up",   "out",  "them",
    "then", "many", "some", "so",   "her",  "make", "like", "him",  "into", "time", "has",  "look",
    "two",  "more", "go",   "see",  "no",   "way",  "my",   "than", "been", "call", "who",  "its",
    "now",  "find", "long", "down", "day",  "did",  "get",  "come", "made", "may",  "part", "over",
    "new",  "take", "only", "sit",  "set",  "top",  "end",  "men",  "air",  "line", "know", "read",
    "well", "also", "back", "give", "most", "very", "move", "much", "name", "good", "just", "form",
    "sort", "help", "low",  "big",  "boy",  "came", "show", "home", "hand", "ask",  "went", "need",
    "land", "here", "must", "sign", "try",  "kind", "off",  "play", "near", "year", "rain", "live",
    "want", "turn", "keep", "feel", "next", "hold", "bird", "tree", "lake", "song", "hour", "wide",
    "open", "seed", "door", "fish", "slow", "rest", "walk", "road", "west", "east", "warm", "cold",
    "red",  "blue", "gold", "dark", "star", "moon", "sun",  "sea",  "sky",  "snow", "wind", "fire",
    "iron", "city", "town", "farm", "ship", "boat", "king", "news", "book", "page", "note", "test",
    "step", "plan", "rule", "fact", "idea", "case", "area", "life", "week", "work", "mind", "love",
    "hope", "care", "face", "head", "eye",  "arm",  "leg",  "foot", "job",  "cost", "rate", "size",
    "team", "game", "role", "fall", "grow", "lead", "pass", "meet", "pay",  "send", "tell", "wait",
    "wish", "fly",  "run",  "hit",  "cut",  "put",  "let",  "buy",  "eat",  "win",  "lose", "add",
    "pull", "push", "draw", "fill", "hear", "lie",  "lay",
};
const int n_common_words = (int)(sizeof common_words / sizeof *common_words);

size_t word_put(const word_source *ws, rng *r, char *buf) {
    if (ws && ws->words && ws->n > 0) {
        const char *w = ws->words[rng_range(r, 0, ws->n - 1)];
        size_t n = 0;
        while (w[n] && n < WORD_MAX_BYTES) {
            buf[n] = w[n];
            n++;
        }
        return n;
    }
    int len = (int)rng_range(r, 1, 4);
    for (int k = 0; k < len; k++)
        buf[k] = (char)('a' + rng_range(r, 0, 25));
    return (size_t)len;
}
