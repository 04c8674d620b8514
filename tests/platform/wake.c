/* wake: tests/platform/wake.h does what the tests rely on it for. A thread waits on a futex word;
 * the word changes with no FUTEX_WAKE (a lost wake-up), so the thread stays blocked; wake_threads()
 * must end that wait, and the thread must then see the new word. Needs no OpenCL.
 * RESULT wake: ok | FAILED (exit status 0 | 1). */
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "wake.h"

static int word;
static int returned;

static void *waiter(void *arg)
{
    (void)arg;
    /* Waits while the word is 0, as a lock or condition variable does, re-checking after each
     * return (a signal restarts the syscall, which re-checks it in the kernel). */
    while (__atomic_load_n(&word, __ATOMIC_ACQUIRE) == 0)
        syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    __atomic_store_n(&returned, 1, __ATOMIC_RELEASE);
    return NULL;
}

static int returned_within(int ms)
{
    for (int i = 0; i < ms && !__atomic_load_n(&returned, __ATOMIC_ACQUIRE); i++)
        usleep(1000);
    return __atomic_load_n(&returned, __ATOMIC_ACQUIRE);
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, waiter, NULL) != 0)
        return 1;
    usleep(50 * 1000); /* in its wait */
    __atomic_store_n(&word, 1, __ATOMIC_RELEASE); /* no FUTEX_WAKE: the wake-up is lost */
    int lost = !returned_within(200);
    printf("wake: the waiter %s without a wake-up\n", lost ? "stayed blocked" : "returned");
    int n = wake_threads();
    int woke = returned_within(2000);
    printf("wake: wake_threads() signalled %d thread(s); the waiter %s\n", n, woke ? "returned" : "is still blocked");
    int ok = lost && n >= 1 && woke;
    printf("RESULT wake: %s\n", ok ? "ok" : "FAILED");
    if (woke)
        pthread_join(t, NULL);
    return ok ? 0 : 1;
}
