// PCRE2 (Debian's libpcre2-dev), 8-bit code units: UTF-8 patterns and subjects. The library's
// function names are macros over their `_8` forms; Swift calls the `_8` functions directly.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <stdint.h>
#include <pcre2.h>
