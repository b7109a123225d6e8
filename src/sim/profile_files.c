/* profile_files: the simulator's profiles that stand for measured servers,
 * kept as the files `servelab fit` wrote (profiles/NAME.yaml, each figure
 * with its provenance) and built into the binary as they are, so that
 * --profile NAME finds them wherever servelab runs. The assembler's
 * .incbin takes the file's bytes: no generated source, nothing to keep in
 * step by hand (the Makefile rebuilds this object when a file changes). */
#include "sim/profile_files.h"

#include <stddef.h>
#include <string.h>

#define EMBED(sym, path)                                                                           \
    __asm__(".section .rodata\n"                                                                   \
            ".global " #sym "\n" #sym ":\n"                                                        \
            ".incbin \"" path "\"\n"                                                               \
            ".byte 0\n"                                                                            \
            ".previous\n")

EMBED(servelab_profile_cpu_1b_2c, "profiles/cpu-1b-2c.yaml");
extern const char servelab_profile_cpu_1b_2c[];
EMBED(servelab_profile_vllm_cpu, "profiles/vllm-cpu.yaml");
extern const char servelab_profile_vllm_cpu[];

static const struct {
    const char *name, *file, *text;
} files[] = {
    {"cpu-1b-2c", "profiles/cpu-1b-2c.yaml", servelab_profile_cpu_1b_2c},
    {"vllm-cpu", "profiles/vllm-cpu.yaml", servelab_profile_vllm_cpu},
};

const char *profile_files_text(const char *name, const char **file) {
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (!strcmp(files[i].name, name)) {
            if (file)
                *file = files[i].file;
            return files[i].text;
        }
    return NULL;
}
