// SQLite's header; SQLITE_TRANSIENT is a macro Swift cannot import, so it is spelled here.
#include <sqlite3.h>

static inline sqlite3_destructor_type sluice_sqlite_transient(void) { return SQLITE_TRANSIENT; }
