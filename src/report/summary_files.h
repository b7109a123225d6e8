/* summary_files: the two machine-readable files of a report. summary.csv
 * holds one line per run with the headline figures first and a fixed
 * number of decimals per column; summary.json holds every figure of every
 * run (pooled, per repetition, per class, bootstrap intervals). */
#ifndef SERVELAB_REPORT_SUMMARY_FILES_H
#define SERVELAB_REPORT_SUMMARY_FILES_H

#include "common/strbuf.h"
#include "report/report.h"

void render_summary_csv(const report *r, strbuf *o);
void render_summary_json(const report *r, strbuf *o);

#endif
