/*
 * report_junit.c - the thresholds' verdict as JUnit XML (--junit FILE), for CI servers.
 */
#include "report.h"

#include <math.h>
#include <string.h>

#include "client_files.h"

/* ---- JUnit XML (--junit FILE) ----------------------------------------------------------- */

/* One test case per threshold (and one for the leak check, one for a server that stopped
 * answering, one for an interrupted run), so
 * that a CI server shows which rule failed and by how much; no thresholds: one case, the
 * run itself. */
static bool churn_report_junit_fn(const void *data, FILE *f)
{
    const churn_report *r = data;
    uint32_t n_th = r->n_thresholds, tests = 0, failures = 0;
    bool leak_case = r->leaks.checked, lost = r->outages.n > 0;

    for (uint32_t i = 0; i < n_th; i++) {
        double v = NAN;
        churn_report_metric(r, r->thresholds[i].metric, &v);
        failures += isnan(v) || !client_threshold_check(&r->thresholds[i], v);
    }
    tests = n_th + leak_case + lost + r->interrupted +
            (n_th == 0 && !leak_case && !lost && !r->interrupted);
    failures += (leak_case && (!r->leaks.supported || r->leaks.leaked != 0)) + lost +
                r->interrupted;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites name=\"reap-client\" tests=\"%u\" failures=\"%u\" time=\"%.3f\">\n"
            "  <testsuite name=\"", tests, failures, r->elapsed);
    churn_svg_text(f, r->scenario);
    fprintf(f, "\" tests=\"%u\" failures=\"%u\" errors=\"0\" time=\"%.3f\" timestamp=\"",
            tests, failures, r->elapsed);
    churn_svg_text(f, r->start_time);
    fputs("\" hostname=\"", f);
    churn_svg_text(f, r->host);
    fputs("\">\n    <properties><property name=\"run_id\" value=\"", f);
    churn_svg_text(f, r->run_id);
    fprintf(f, "\"/><property name=\"seed\" value=\"%llu\"/><property name=\"bots\" "
            "value=\"%u\"/></properties>\n", (unsigned long long)r->seed, r->bots);
    for (uint32_t i = 0; i < n_th; i++) {
        const client_threshold *th = &r->thresholds[i];
        double v = NAN;
        char shown[48];

        churn_report_metric(r, th->metric, &v);
        fputs("    <testcase classname=\"reap-client.thresholds\" name=\"", f);
        churn_svg_text(f, th->text);
        fputs("\" time=\"0\">", f);
        if (isnan(v)) {
            fputs("<failure message=\"not measured in this run\" type=\"threshold\"/>", f);
        } else {
            client_threshold_format(th, v, shown, sizeof shown);
            if (!client_threshold_check(th, v)) {
                fputs("<failure message=\"", f);
                churn_svg_text(f, th->metric);
                fputs(" was ", f);
                churn_svg_text(f, shown);
                fputs("\" type=\"threshold\"/>", f);
            } else {
                fputs("<system-out>", f);
                churn_svg_text(f, shown);
                fputs("</system-out>", f);
            }
        }
        fputs("</testcase>\n", f);
    }
    if (leak_case) {
        fputs("    <testcase classname=\"reap-client.leaks\" name=\"no object outlives the "
              "run\" time=\"0\">", f);
        if (!r->leaks.supported || r->leaks.leaked < 0)
            fputs("<failure message=\"the leak check could not run\" type=\"leaks\"/>", f);
        else if (r->leaks.leaked != 0)
            fprintf(f, "<failure message=\"%ld objects outlived the run\" type=\"leaks\"/>",
                    r->leaks.leaked);
        fputs("</testcase>\n", f);
    }
    if (lost)
        fprintf(f, "    <testcase classname=\"reap-client.run\" name=\"the server answers\" "
                "time=\"%.3f\"><failure message=\"the server stopped answering at %.1f s; %.1f "
                "s of the run had no server\" type=\"server_lost\"/></testcase>\n", r->elapsed,
                r->outages.list[0].from, churn_outages_seconds(&r->outages, r->elapsed));
    if (r->interrupted)
        fprintf(f, "    <testcase classname=\"reap-client.run\" name=\"the run completes\" "
                "time=\"%.3f\"><failure message=\"interrupted after %.1f of %.1f s\" "
                "type=\"interrupted\"/></testcase>\n", r->elapsed, r->elapsed, r->duration);
    else if (n_th == 0 && !leak_case && !lost)
        fprintf(f, "    <testcase classname=\"reap-client.run\" name=\"the run completes\" "
                "time=\"%.3f\"/>\n", r->elapsed);
    fputs("  </testsuite>\n</testsuites>\n", f);
    fflush(f);
    return !ferror(f);
}

bool churn_report_junit_writer(const void *report, FILE *f)
{
    return churn_report_junit_fn(report, f);
}

bool churn_report_write_junit(const churn_report *r, const char *path, char *err,
                              size_t err_size)
{
    return churn_write_path(path, churn_report_junit_fn, r, err, err_size);
}
