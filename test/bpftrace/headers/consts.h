/* A header for test/bpftrace/runtime/include: constants #include reads. */
#ifndef CONSTS_H
#define CONSTS_H
#define ANSWER 42
#define NEXT (ANSWER + 1) /* an expression */
#define TWICE(x) ((x) * 2) /* function-like: left out */
struct left_out { int a; }; /* types come from BTF and the script */
#include "sys/more.h"
#endif
