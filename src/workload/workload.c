/* workload: prompt sources, the seeded assignment and request bodies. */
#include "workload/workload.h"
#include "common/rng.h"
#include "model/tokens.h"
#include "common/util.h"
#include "workload/builtin_prompts.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A number macro as a string literal, for messages that state a limit. */
#define NUMBER_TEXT_(x) #x
#define NUMBER_TEXT(x) NUMBER_TEXT_(x)

static int class_index(workload *w, const char *name) {
    for (int i = 0; i < w->n_classes; i++)
        if (!strcmp(w->class_names[i], name))
            return i;
    if (w->n_classes == WORKLOAD_MAX_CLASSES)
        return -1;
    w->class_names[w->n_classes] = xstrdup(name);
    return w->n_classes++;
}

static prompt_item *new_item(workload *w) {
    if ((w->n_items & (w->n_items - 1)) == 0) /* grow at powers of two */
        w->items = xrealloc(w->items, (w->n_items ? w->n_items * 2 : 1) * sizeof *w->items);
    prompt_item *it = &w->items[w->n_items++];
    memset(it, 0, sizeof *it);
    return it;
}

static char *user_messages(const char *system, const char *user) {
    json_t *m = json_array();
    if (system)
        json_array_append_new(m, json_pack("{s:s,s:s}", "role", "system", "content", system));
    json_array_append_new(m, json_pack("{s:s,s:s}", "role", "user", "content", user));
    char *s = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    return s;
}

static void load_builtin(workload *w) {
    for (int c = 0; c < builtin_n_classes; c++) {
        const builtin_class *bc = &builtin_classes[c];
        int ci = class_index(w, bc->name);
        w->class_default_max_tokens[ci] = bc->output_max_tokens;
        for (int i = 0; i < bc->n_prompts; i++) {
            const builtin_prompt *bp = &bc->prompts[i];
            prompt_item *it = new_item(w);
            it->cls = ci;
            if (bp->system) {
                size_t n = strlen(bp->system) + strlen(bp->user) + 3;
                it->text = xmalloc(n);
                snprintf(it->text, n, "%s\n\n%s", bp->system, bp->user);
            } else {
                it->text = xstrdup(bp->user);
            }
            it->messages_json = user_messages(bp->system, bp->user);
            it->prompt_tokens = (int)count_text_tokens(it->text, strlen(it->text));
        }
    }
}

char *workload_messages_text(json_t *msgs) {
    size_t i, cap = 256, n = 0;
    char *out = xmalloc(cap);
    out[0] = 0;
    json_t *m;
    json_array_foreach(msgs, i, m) {
        json_t *c = json_object_get(m, "content");
        if (!json_is_string(c))
            continue;
        size_t len = json_string_length(c);
        if (n + len + 2 > cap)
            out = xrealloc(out, cap = (n + len + 2) * 2);
        if (n)
            out[n++] = '\n';
        memcpy(out + n, json_string_value(c), len);
        n += len;
        out[n] = 0;
    }
    return out;
}

static int load_jsonl(workload *w, const char *path, char *err, int errlen) {
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "--prompts %s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, rc = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (lineno == 1 && len >= 3 && !memcmp(line, "\xEF\xBB\xBF", 3)) /* a UTF-8 BOM */
            memmove(line, line + 3, (size_t)(len -= 3) + 1);
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (strspn(line, " \t") == (size_t)len)
            continue;
        json_error_t je;
        json_t *o = json_loadb(line, (size_t)len, 0, &je);
        const char *why = NULL;
        json_t *prompt = o ? json_object_get(o, "prompt") : NULL;
        json_t *msgs = o ? json_object_get(o, "messages") : NULL;
        json_t *mt = o ? json_object_get(o, "max_tokens") : NULL;
        json_t *cls = o ? json_object_get(o, "class") : NULL;
        if (!o)
            why = je.text;
        else if (!json_is_object(o))
            why = "each line must be a JSON object";
        else if (!json_is_string(prompt) && !(json_is_array(msgs) && json_array_size(msgs)))
            why = "needs \"prompt\" (a string) or \"messages\" (a non-empty list)";
        else if (mt && !(json_is_integer(mt) && json_integer_value(mt) >= 1 &&
                         json_integer_value(mt) <= 1000000))
            why = "\"max_tokens\" must be a positive integer";
        else if (cls && !json_is_string(cls))
            why = "\"class\" must be a string";
        else if (cls && json_string_length(cls) > WORKLOAD_MAX_CLASS_BYTES)
            why =
                "\"class\" is longer than " NUMBER_TEXT(WORKLOAD_MAX_CLASS_BYTES) " bytes (a class "
                                                                                  "is a name)";
        int ci = why ? 0 : class_index(w, cls ? json_string_value(cls) : "file");
        if (!why && ci < 0)
            why = "too many distinct classes (at most 32)";
        if (why) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
            json_decref(o);
            rc = -1;
            break;
        }
        prompt_item *it = new_item(w);
        it->cls = ci;
        if (json_is_string(prompt)) {
            it->text = xstrdup(json_string_value(prompt));
            it->messages_json = user_messages(NULL, it->text);
        } else {
            it->text = workload_messages_text(msgs);
            it->messages_json = json_dumps(msgs, JSON_COMPACT);
        }
        it->max_tokens = mt ? (int)json_integer_value(mt) : 0;
        it->prompt_tokens = (int)count_text_tokens(it->text, strlen(it->text));
        json_decref(o);
    }
    free(line);
    fclose(f);
    if (!rc && w->n_items == 0) {
        snprintf(err, errlen, "%s: no prompts in file", path);
        rc = -1;
    }
    return rc;
}

/* Every turn of a ShareGPT conversation, as chat messages (user and
 * assistant alternating, from the first human turn on, as long as they
 * alternate), for multi-turn runs (conversation.h). */
static void sharegpt_turns(prompt_item *it, json_t *turns) {
    json_t *msgs = json_array();
    size_t i;
    json_t *t;
    json_array_foreach(turns, i, t) {
        json_t *from = json_object_get(t, "from"), *value = json_object_get(t, "value");
        const char *want = i % 2 ? "gpt" : "human";
        if (!json_is_string(from) || !json_is_string(value) ||
            strcmp(json_string_value(from), want))
            break;
        json_array_append_new(
            msgs, json_pack("{s:s,s:O}", "role", i % 2 ? "assistant" : "user", "content", value));
    }
    it->n_turns = (int)(json_array_size(msgs) / 2);
    it->turns_json = json_dumps(msgs, JSON_COMPACT);
    /* each reply's length, counted once here rather than at every send */
    it->reply_tokens = xmalloc((size_t)(it->n_turns ? it->n_turns : 1) * sizeof *it->reply_tokens);
    for (int k = 0; k < it->n_turns; k++) {
        json_t *c = json_object_get(json_array_get(msgs, 2 * (size_t)k + 1), "content");
        int n = (int)count_text_tokens(json_string_value(c), json_string_length(c));
        it->reply_tokens[k] = n < 4 ? 4 : n;
    }
    json_decref(msgs);
}

/* ShareGPT: a list of {"conversations": [{"from": "human", "value": ...},
 * {"from": "gpt", "value": ...}, ...]}. The first human turn is the prompt;
 * the reply that follows sets the output length (as vLLM's bench does).
 * Entries without such a pair are skipped. */
static int load_sharegpt(workload *w, const char *path, char *err, int errlen) {
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        if (je.line <= 0)
            snprintf(err, errlen, "--prompts sharegpt:%s: %s", path, je.text);
        else
            snprintf(err, errlen, "%s:%d: invalid JSON: %s", path, je.line, je.text);
        return -1;
    }
    if (!json_is_array(root)) {
        snprintf(err, errlen, "%s:1: a ShareGPT file is a JSON list of conversations", path);
        json_decref(root);
        return -1;
    }
    int ci = class_index(w, "sharegpt");
    size_t i;
    json_t *conv;
    json_array_foreach(root, i, conv) {
        json_t *turns = json_object_get(conv, "conversations");
        if (!json_is_array(turns) || json_array_size(turns) < 2)
            continue;
        json_t *q = json_object_get(json_array_get(turns, 0), "value");
        json_t *a = json_object_get(json_array_get(turns, 1), "value");
        if (!json_is_string(q) || !json_is_string(a) || json_string_length(q) == 0)
            continue;
        prompt_item *it = new_item(w);
        it->cls = ci;
        it->text = xstrdup(json_string_value(q));
        it->messages_json = user_messages(NULL, it->text);
        it->prompt_tokens = (int)count_text_tokens(it->text, strlen(it->text));
        int out = (int)count_text_tokens(json_string_value(a), json_string_length(a));
        it->max_tokens = out < 4 ? 4 : out;
        sharegpt_turns(it, turns);
    }
    json_decref(root);
    if (w->n_items == 0) {
        snprintf(err, errlen, "%s: no usable conversations (need a human turn and a reply)", path);
        return -1;
    }
    return 0;
}

static int parse_mix(workload *w, const char *mix, char *err, int errlen) {
    for (int i = 0; i < w->n_classes; i++)
        w->mix[i] = 0;
    char *copy = xstrdup(mix), *save = NULL;
    double total = 0;
    int rc = 0, seen[WORKLOAD_MAX_CLASSES] = {0};
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        double v;
        if (!eq || parse_double(eq + 1, &v) || v < 0 || !(v <= 1e9)) {
            snprintf(err, errlen, "--mix: '%s' is not CLASS=WEIGHT (a weight from 0 to 1e9)", tok);
            rc = -1;
            break;
        }
        *eq = 0;
        int ci = -1;
        for (int i = 0; i < w->n_classes; i++)
            if (!strcmp(w->class_names[i], tok))
                ci = i;
        if (ci < 0) {
            char names[256] = "";
            for (int i = 0; i < w->n_classes; i++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                         w->class_names[i]);
            snprintf(err, errlen, "--mix: unknown class '%s' (classes: %s)", tok, names);
            rc = -1;
            break;
        }
        if (seen[ci]) {
            snprintf(err, errlen, "--mix: class '%s' is given twice", tok);
            rc = -1;
            break;
        }
        seen[ci] = 1;
        w->mix[ci] = v;
        total += v;
    }
    free(copy);
    if (!rc && total <= 0) {
        snprintf(err, errlen, "--mix: weights add up to 0");
        rc = -1;
    }
    for (int i = 0; !rc && i < w->n_classes; i++)
        w->mix[i] /= total;
    return rc;
}

/* Messages quote the input (jansson's "near '...'" copies the bytes it
 * stopped at), which may hold a newline or a tab: keep the message one line. */
static int one_line(int rc, char *err) {
    if (rc)
        for (char *s = err; *s; s++)
            if ((unsigned char)*s < 0x20)
                *s = ' ';
    return rc;
}

static int load(workload *w, const char *spec, const char *mix, char *err, int errlen) {
    memset(w, 0, sizeof *w);
    snprintf(w->source, sizeof w->source, "%s", spec);
    int rc = 0;
    if (!strcmp(spec, "builtin")) {
        load_builtin(w);
        if (!mix)
            mix = "short=0.5,medium=0.3,long=0.2";
    } else if (!strncmp(spec, "random:", 7)) {
        long in, out;
        char a[32], b[32];
        if (sscanf(spec + 7, "%31[^:]:%31s", a, b) != 2 || parse_int(a, &in) ||
            parse_int(b, &out) || in < 1 || out < 1 || in > 1000000 || out > 1000000) {
            snprintf(err, errlen, "--prompts %s: expected random:IN:OUT with positive integers",
                     spec);
            return one_line(-1, err);
        }
        w->random_in = (int)in;
        w->random_out = (int)out;
        class_index(w, "random");
        w->class_default_max_tokens[0] = (int)out;
        if (mix) {
            snprintf(err, errlen, "--mix does not apply to random prompts");
            return -1;
        }
        return 0;
    } else if (!strncmp(spec, "sharegpt:", 9)) {
        rc = load_sharegpt(w, spec + 9, err, errlen);
    } else {
        rc = load_jsonl(w, spec, err, errlen);
    }
    if (!rc && mix)
        rc = parse_mix(w, mix, err, errlen);
    if (!rc && mix) {
        for (int c = 0; c < w->n_classes; c++) {
            int has = 0;
            for (size_t i = 0; i < w->n_items && !has; i++)
                has = w->items[i].cls == c;
            if (w->mix[c] > 0 && !has) {
                snprintf(err, errlen, "--mix: class '%s' has no prompts", w->class_names[c]);
                rc = -1;
            }
        }
    }
    return one_line(rc, err);
}

int workload_load(workload *w, const char *spec, const char *mix, char *err, int errlen) {
    int rc = load(w, spec, mix, err, errlen);
    if (rc)
        workload_free(w); /* what was read before the error */
    return rc;
}

static int mix_in_use(const workload *w) {
    for (int i = 0; i < w->n_classes; i++)
        if (w->mix[i] > 0)
            return 1;
    return 0;
}

void workload_assign(workload *w, size_t n, uint64_t seed) {
    free(w->assign);
    w->assign = NULL;
    w->n_requests = n;
    w->seed = seed;
    w->shape.seed = seed;
    if (w->random_in)
        return;
    w->assign = xmalloc((n ? n : 1) * sizeof *w->assign);
    rng r;
    rng_seed(&r, seed ^ 0x9c0a55ULL);
    if (mix_in_use(w)) {
        /* items of each class, in load order */
        size_t *start = xcalloc((size_t)w->n_classes + 1, sizeof *start);
        uint32_t *by_class = xmalloc(w->n_items * sizeof *by_class);
        for (size_t i = 0; i < w->n_items; i++)
            start[w->items[i].cls + 1]++;
        for (int c = 0; c < w->n_classes; c++)
            start[c + 1] += start[c];
        size_t *fill = xcalloc((size_t)w->n_classes, sizeof *fill);
        for (size_t i = 0; i < w->n_items; i++) {
            int c = w->items[i].cls;
            by_class[start[c] + fill[c]++] = (uint32_t)i;
        }
        for (size_t k = 0; k < n; k++) {
            double u = rng_uniform(&r), acc = 0;
            int c = 0;
            for (c = 0; c < w->n_classes - 1; c++) {
                acc += w->mix[c];
                if (u < acc && w->mix[c] > 0)
                    break;
            }
            while (w->mix[c] <= 0 && c > 0) /* rounding fell past the last weighted class */
                c--;
            size_t cnt = start[c + 1] - start[c];
            w->assign[k] = by_class[start[c] + (size_t)rng_range(&r, 0, (int64_t)cnt - 1)];
        }
        free(start);
        free(by_class);
        free(fill);
        return;
    }
    /* No mix: a seeded permutation of the file's prompts, cycled. */
    uint32_t *perm = xmalloc(w->n_items * sizeof *perm);
    for (size_t i = 0; i < w->n_items; i++)
        perm[i] = (uint32_t)i;
    for (size_t i = w->n_items; i > 1; i--) {
        size_t j = (size_t)rng_range(&r, 0, (int64_t)i - 1);
        uint32_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    for (size_t k = 0; k < n; k++)
        w->assign[k] = perm[k % w->n_items];
    free(perm);
}

void workload_use_replay(workload *w, replay_trace *t) {
    memset(w, 0, sizeof *w);
    snprintf(w->source, sizeof w->source, "replay:%.*s", (int)sizeof w->source - 8, t->path);
    class_index(w, "replay");
    w->replay = t;
    w->n_requests = t->n;
}

const char *workload_class_of(const workload *w, size_t req) {
    if (w->random_in || w->replay)
        return w->class_names[0];
    return w->class_names[w->items[w->assign[req]].cls];
}

int workload_max_tokens(const workload *w, size_t req, const body_opts *o) {
    if (o->max_tokens > 0)
        return o->max_tokens;
    int reply = w->conv.n_conv ? conversation_reply_tokens(w, req) : 0;
    if (reply > 0)
        return reply;
    if (w->replay)
        return replay_output_tokens(w->replay, req);
    if (w->random_in)
        return w->random_out;
    const prompt_item *it = &w->items[w->assign[req]];
    if (it->max_tokens > 0)
        return it->max_tokens;
    int d = w->class_default_max_tokens[it->cls];
    return d > 0 ? d : 256;
}

int workload_prompt_tokens(const workload *w, size_t req) {
    if (w->conv.n_conv)
        return conversation_prompt_tokens(w, req);
    if (w->replay)
        return replay_prompt_tokens(w->replay, req);
    int extra = shaping_extra_tokens(&w->shape, req);
    if (w->random_in)
        return w->random_in + extra;
    return w->items[w->assign[req]].prompt_tokens + extra;
}

/* random:IN:OUT for chat: IN words (words.h), exactly IN tokens by
 * servelab's rule (and the server's, with its words); for completions the
 * token ids themselves. */
static json_t *random_prompt(const workload *w, size_t req, int chat) {
    rng r;
    rng_seed(&r, mix64(w->seed ^ (0x7a11d0ULL + req)));
    if (!chat) {
        json_t *ids = json_array();
        for (int i = 0; i < w->random_in; i++)
            json_array_append_new(ids, json_integer(rng_range(&r, 100, 30000)));
        return ids;
    }
    char *text = xmalloc((size_t)w->random_in * (WORD_MAX_BYTES + 1) + 1);
    size_t n = 0;
    for (int i = 0; i < w->random_in; i++) {
        if (i)
            text[n++] = ' ';
        n += word_put(&w->words, &r, text + n);
    }
    text[n] = 0;
    json_t *msgs = json_pack("[{s:s,s:s}]", "role", "user", "content", text);
    free(text);
    return msgs;
}

json_t *workload_turn_prompt(const workload *w, size_t req, int chat) {
    if (w->random_in)
        return random_prompt(w, req, chat);
    const prompt_item *it = &w->items[w->assign[req]];
    return chat ? json_loads(it->messages_json, 0, NULL) : json_string(it->text);
}

int workload_turn_tokens(const workload *w, size_t req) {
    return w->random_in ? w->random_in : w->items[w->assign[req]].prompt_tokens;
}

/* The prompt of an item, shaped (shaping.h). */
static json_t *item_prompt(const workload *w, size_t req, int chat) {
    const prompt_item *it = &w->items[w->assign[req]];
    if (chat) {
        json_t *msgs = json_loads(it->messages_json, 0, NULL);
        shaping_messages(&w->shape, req, msgs);
        return msgs;
    }
    char *text = shaping_text(&w->shape, req, it->text);
    json_t *j = json_string(text);
    free(text);
    return j;
}

/* --replay: the prompt's JSON, written by replay.c in one pass (a long
 * one as jansson values would make the request late), put in front of
 * the rest of the body (never empty: max_tokens and stream are in it). */
static char *with_replay_prompt(const workload *w, size_t req, int chat, char *rest) {
    size_t n, r = strlen(rest);
    char *prompt = replay_prompt_json(w->replay, req, chat, &n);
    const char *key = chat ? "{\"messages\":" : "{\"prompt\":";
    size_t k = strlen(key);
    char *out = xmalloc(k + n + r + 1);
    memcpy(out, key, k);
    memcpy(out + k, prompt, n);
    out[k + n] = ',';
    memcpy(out + k + n + 1, rest + 1, r); /* after its '{', with the NUL */
    free(prompt);
    free(rest);
    return out;
}

json_t *workload_extra_body(const char *text, char *why, size_t whylen) {
    /* what servelab sets and records itself (max_completion_tokens is the
     * chat API's max_tokens; n > 1 would be several answers in one row) */
    static const char *const ours[] = {"model",      "prompt",
                                       "messages",   "max_tokens",
                                       "stream",     "stream_options",
                                       "ignore_eos", "max_completion_tokens",
                                       "n",          NULL};
    json_error_t je;
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!v || !json_is_object(v)) {
        if (v)
            snprintf(why, whylen,
                     "expected a JSON object like '{\"cache_prompt\":false}', got '%.60s'", text);
        else
            snprintf(why, whylen, "not JSON (%s), got '%.60s'", je.text, text);
        json_decref(v);
        return NULL;
    }
    for (int i = 0; ours[i]; i++)
        if (json_object_get(v, ours[i])) {
            snprintf(why, whylen,
                     "'%s' is set by servelab itself (see --help), not by --extra-body", ours[i]);
            json_decref(v);
            return NULL;
        }
    return v;
}

static json_t *body_object(const workload *w, size_t req, const body_opts *o);

json_t *workload_body_object(const workload *w, size_t req, const body_opts *o) {
    if (w->replay)
        return NULL;
    return body_object(w, req, o);
}

char *workload_body(const workload *w, size_t req, const body_opts *o, size_t *len) {
    json_t *body = body_object(w, req, o);
    char *s = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (w->replay)
        s = with_replay_prompt(w, req, o->chat, s);
    if (len)
        *len = strlen(s);
    return s;
}

/* The body as an object; a replay's prompt is left out (workload_body
 * puts its text in once the rest is dumped). */
static json_t *body_object(const workload *w, size_t req, const body_opts *o) {
    json_t *body = json_object();
    if (o->model)
        json_object_set_new(body, "model", json_string(o->model));
    if (w->conv.n_conv) {
        json_object_set_new(body, o->chat ? "messages" : "prompt",
                            conversation_prompt(w, req, o->chat));
    } else if (w->replay) {
        /* its prompt goes in as text once the rest is dumped */
    } else if (w->random_in) {
        json_t *p = random_prompt(w, req, o->chat);
        if (o->chat)
            shaping_messages(&w->shape, req, p);
        else
            shaping_ids(&w->shape, req, p);
        json_object_set_new(body, o->chat ? "messages" : "prompt", p);
    } else {
        json_object_set_new(body, o->chat ? "messages" : "prompt", item_prompt(w, req, o->chat));
    }
    json_object_set_new(body, "max_tokens", json_integer(workload_max_tokens(w, req, o)));
    if (o->ignore_eos)
        json_object_set_new(body, "ignore_eos", json_true());
    if (o->extra)
        json_object_update(body, o->extra);
    json_object_set_new(body, "stream", json_true());
    if (o->include_usage || o->continuous_usage) {
        json_t *so = json_object();
        json_object_set_new(so, "include_usage", json_true());
        if (o->continuous_usage)
            json_object_set_new(so, "continuous_usage_stats", json_true());
        json_object_set_new(body, "stream_options", so);
    }
    return body;
}

void workload_free(workload *w) {
    for (size_t i = 0; i < w->n_items; i++) {
        free(w->items[i].text);
        free(w->items[i].messages_json);
        free(w->items[i].turns_json);
        free(w->items[i].reply_tokens);
    }
    free(w->items);
    for (int i = 0; i < w->n_classes; i++)
        free((char *)w->class_names[i]);
    free(w->assign);
    free(w->conv.first);
    free(w->conv.conv);
    free(w->conv.turn);
    free(w->conv.next);
    if (w->replay)
        replay_free(w->replay);
    free(w->replay);
    memset(w, 0, sizeof *w);
}
