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

#include <fcntl.h>

/// splice(2) between two descriptors at their current positions, through the system call for
/// the same reason.
static inline long sluice_splice(int in, int out, size_t length, unsigned int flags) {
    return syscall(SYS_splice, in, NULL, out, NULL, length, flags);
}

/// A non-blocking, close-on-exec pipe (pipe2(2)), and its capacity (F_SETPIPE_SZ, fcntl(2)).
static inline int sluice_pipe(int fds[2]) { return (int)syscall(SYS_pipe2, fds, O_NONBLOCK | O_CLOEXEC); }
static inline int sluice_set_pipe_size(int fd, int size) {
    int set = fcntl(fd, 1031 /* F_SETPIPE_SZ */, size);
    return set > 0 ? set : fcntl(fd, 1032 /* F_GETPIPE_SZ */);
}
static const unsigned int sluice_splice_move = 1, sluice_splice_nonblock = 2;
