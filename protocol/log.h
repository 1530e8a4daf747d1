/*
 * log.h - the one shape of a daemon's log line: "PROGRAM: message\n",
 * flushed at once, so that the lines of swf-decider and swf-history read
 * alike and reach a pipe or a file as they happen.
 *
 * Only a daemon's loop logs (library functions return their errors); the
 * daemon owns the stream and passes NULL for no log.
 */
#ifndef SWF_PROTO_LOG_H
#define SWF_PROTO_LOG_H

#include <stdarg.h>
#include <stdio.h>

/* Writes one line, "program: " then fmt formatted with ap, to log and
 * flushes it; does nothing when log is NULL. As thread-safe as stdio. */
static inline void swf_log_vwrite(FILE *log, const char *program, const char *fmt, va_list ap)
{
    if (log == NULL)
        return;
    fprintf(log, "%s: ", program);
    vfprintf(log, fmt, ap);
    fputc('\n', log);
    fflush(log);
}

#endif
