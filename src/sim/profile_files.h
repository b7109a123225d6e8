/* profile_files: the built-in profiles that are fitted files
 * (profiles/NAME.yaml, built into the binary; see profile_files.c). */
#ifndef SERVELAB_PROFILE_FILES_H
#define SERVELAB_PROFILE_FILES_H

/* The text of built-in profile file `name` (NUL-terminated), and its path
 * in the source tree into *file when not NULL; NULL when there is none. */
const char *profile_files_text(const char *name, const char **file);

#endif
