/* libcrashtrace.so: preloaded into a program that dies now and then (LD_PRELOAD), it prints the
 * dying thread's stack and the process's mappings to stderr on SIGSEGV, SIGBUS or SIGABRT (glibc's
 * fatal errors abort), then dies of the same signal. The frames are library+offset: resolve them
 * with `addr2line -f -e LIB OFFSET` against the unstripped library. scripts/gpu/run.sh's `crashes`
 * part uses it. */
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void say(const char *s) { (void)!write(2, s, strlen(s)); }

static void on_fatal(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    char line[160];
    snprintf(line, sizeof line, "\ncrashtrace: signal %d, address %p, thread %ld; stack:\n", sig,
             si->si_addr, (long)gettid());
    say(line);
    void *frames[64];
    int n = backtrace(frames, 64);
    backtrace_symbols_fd(frames, n, 2);
    say("crashtrace: mappings:\n");
    int fd = open("/proc/self/maps", O_RDONLY);
    if (fd >= 0) {
        char buf[4096];
        ssize_t r;
        while ((r = read(fd, buf, sizeof buf)) > 0) (void)!write(2, buf, (size_t)r);
        close(fd);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

__attribute__((constructor)) static void crashtrace_init(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGABRT, &sa, NULL);
}
