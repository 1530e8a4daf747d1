/*
 * alloc.h - the project's rule for running out of memory, in one place:
 * growing a dynamic array and copying a string never fail, they abort.
 *
 * They abort as swf_error_new does, because no caller could do anything
 * useful with the failure (there is not even the memory to report it), and
 * a size whose byte count would overflow size_t aborts the same way rather
 * than wrapping into a short buffer. Arrays double their capacity, from a
 * first size the caller picks, when they are full; a zeroed (items NULL,
 * cap 0) array is an empty one. What these return belongs to the caller,
 * as the memory they replace did.
 */
#ifndef SWF_PROTO_ALLOC_H
#define SWF_PROTO_ALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Returns items reallocated to the next capacity (first, which is not 0,
 * when *cap is 0, else twice *cap) of elements of size bytes, and stores
 * that capacity in *cap. Never returns NULL. */
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

/* A copy of s, or NULL when s is NULL. */
static inline char *swf_strdup(const char *s)
{
    if (s == NULL)
        return NULL;
    char *copy = strdup(s);
    if (copy == NULL)
        abort();
    return copy;
}

#endif
