/* builtin_prompts: servelab's built-in workload text. Three classes of
 * realistic chat and instruction prompts (short, medium, long) with stated
 * prompt and output token ranges, so a load test can run against any server
 * without downloading a dataset, and its results stay comparable across runs
 * because every run draws from the same fixed text. */
#ifndef SERVELAB_BUILTIN_PROMPTS_H
#define SERVELAB_BUILTIN_PROMPTS_H

typedef struct builtin_prompt {
    const char *system; /* system message for chat, may be NULL */
    const char *user;   /* the user's message; for completions it is the prompt text */
} builtin_prompt;

typedef struct builtin_class {
    const char *name;      /* "short", "medium", "long" */
    int prompt_min_tokens; /* stated prompt token range (servelab's token rule, user+system text) */
    int prompt_max_tokens;
    int output_min_tokens; /* stated output token range the class asks for */
    int output_max_tokens; /* also the class's default max_tokens */
    const builtin_prompt *prompts;
    int n_prompts;
} builtin_class;

extern const builtin_class builtin_classes[];
extern const int builtin_n_classes; /* 3 */

#endif
