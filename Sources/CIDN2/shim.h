// GNU libidn2 (Debian's libidn2-dev): IDNA2008 (RFC 5890–5893) and Punycode (RFC 3492).
#include <idn2.h>
