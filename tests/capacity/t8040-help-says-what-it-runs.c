/* capacity --help says how long the confirmation run is as the search
 * runs it: the --confirm row and the description both name
 * CAPACITY_CONFIRM_PROBES probes (the help said 4 while the search ran 3). */
#include "capacity/search.h"
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TEST(capacity_help_names_the_confirmation_length_the_search_runs) {
    static const char *const words[] = {"zero", "one", "two", "three", "four", "five", "six"};
    char *out;
    CHECK_INT(servelab_cmd("capacity --help", &out), 0);
    char row[96], text[96];
    snprintf(row, sizeof row, "run the answer once more, %d full probes long",
             CAPACITY_CONFIRM_PROBES);
    snprintf(text, sizeof text, "answer once more, %s probes long", words[CAPACITY_CONFIRM_PROBES]);
    CHECK_MSG(strstr(out, row) != NULL, "no '%s' in:\n%s", row, out);
    CHECK_MSG(strstr(out, text) != NULL, "no '%s' in:\n%s", text, out);
    free(out);
}
