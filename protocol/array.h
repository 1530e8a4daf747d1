/*
 * array.h - the one way the project grows a dynamic array: double its
 * capacity (starting from a size the caller picks) when it is full.
 *
 * Growth never fails: running out of memory aborts, as swf_error_new does,
 * because no caller could do anything useful with the failure, and a size
 * whose byte count would overflow size_t aborts the same way rather than
 * wrapping into a short buffer. The array keeps its owner; growing only moves
 * it. A zeroed (items NULL, cap 0) array is an empty one.
 */
#ifndef SWF_PROTO_ARRAY_H
#define SWF_PROTO_ARRAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Returns items reallocated to the next capacity (first when *cap is 0,
 * else twice *cap), elements of size bytes, and stores that capacity in
 * *cap. Never returns NULL. */
static inline void *swf_array_grow(void *items, size_t *cap, size_t size, size_t first)
{
    size_t next = *cap ? *cap : first;
    if (*cap != 0) {
        if (next > SIZE_MAX / 2)
            abort();
        next *= 2;
    }
    if (size != 0 && next > SIZE_MAX / size)
        abort();
    void *grown = realloc(items, next * size);
    if (grown == NULL)
        abort();
    *cap = next;
    return grown;
}

/* Makes room for one more element after the count elements of items (a
 * typed pointer), growing it as swf_array_grow does; cap is a size_t
 * lvalue. */
#define SWF_ARRAY_RESERVE(items, count, cap, first)                                                \
    do {                                                                                           \
        if ((count) >= (cap))                                                                      \
            (items) = swf_array_grow((items), &(cap), sizeof(*(items)), (first));                  \
    } while (0)

#endif
