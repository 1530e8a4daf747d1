/*
 * number.h - JavaScript's text of a number and JSONata's half-even
 * rounding, shared by the JSONata evaluator and picture.c. Internal to
 * decider/asl.
 *
 * Thread-safety: reentrant (no state; the C library's conversions in the
 * "C" locale the engine runs in). Nothing is allocated.
 */
#ifndef SWF_ASL_NUMBER_H
#define SWF_ASL_NUMBER_H

/* Writes d (finite) as JavaScript's Number.prototype.toString does: the
 * shortest digits that read back as d, positional from 1e-7 to 1e21 and
 * exponential ("1e+21") beyond. out has room for any double. */
void swf_asl_number_format(double d, char out[48]);

/* d rounded half to even at `precision` decimal places (negative: tens,
 * hundreds...), as JSONata's $round: on d's decimal text, so that 2.675
 * gives 2.68. Never -0. */
double swf_asl_number_round(double d, int precision);

#endif
