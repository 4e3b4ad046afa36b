// libevent's event-config.h defines _GNU_SOURCE; a libc header first keeps fd_set identical
// to Glibc's module (see NOTES-interop.md).
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <event2/event.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <event2/dns.h>
#include <event2/util.h>
#include <sys/eventfd.h>
#include <signal.h>
#include <unistd.h>
#include <errno.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <linux/memfd.h>

/// memfd_create(2) without _GNU_SOURCE before the first libc header (see above): the system call.
static inline int sluice_memfd_create(const char *name, unsigned int flags) {
    return (int)syscall(SYS_memfd_create, name, flags);
}
