/* tee_stream.h — a stream that writes everything to two streams.
 *
 * Used to keep a copy of a report printed to the terminal (a recipe's text
 * with -o DIR). Writes go to first, then second; a write fails when either
 * fails. fclose() flushes both and leaves both open.
 */
#ifndef XGDBPROF_TEE_STREAM_H
#define XGDBPROF_TEE_STREAM_H

#include <stdio.h>

/* A write-only stream onto first and second. NULL if out of memory. */
FILE *tee_stream(FILE *first, FILE *second);

#endif
