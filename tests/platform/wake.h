/* wake_threads(): sends every other thread of the process a signal whose handler does nothing.
 *
 * A thread blocked in a futex wait re-checks the futex word when a signal interrupts the wait (the
 * kernel restarts the wait only if the word still holds the value it waited on). A wait whose
 * wake-up was lost, the word changed but no FUTEX_WAKE reached the thread, returns then. NVIDIA's
 * OpenCL (driver 580.159.04) sometimes never finishes destroying a context, on the releasing
 * thread or on its own, until such a signal (or a debugger attaching, which interrupts the same
 * way) comes: docs/gpu.md, "NVIDIA's context teardown defect". Tests use this to tell that from a
 * context something still holds.
 *
 * Returns the number of threads signalled, or -1 where there is no /proc/self/task (not Linux). */
#ifndef DXCL_TESTS_WAKE_H
#define DXCL_TESTS_WAKE_H

#if defined(__linux__)
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void wake_threads_handler(int sig) { (void)sig; }

static int wake_threads(void)
{
    /* SIGURG: ignored by default, so a signal that arrives after this process stops caring does no
     * harm; with a handler it interrupts waits. SA_RESTART: every other call carries on as before. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = wake_threads_handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGURG, &sa, NULL) != 0)
        return -1;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    long self = syscall(SYS_gettid);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid > 0 && tid != self && syscall(SYS_tgkill, (long)getpid(), tid, SIGURG) == 0)
            n++;
    }
    closedir(d);
    return n;
}
#else
static int wake_threads(void) { return -1; }
#endif

#endif
