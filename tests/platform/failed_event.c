/* failed_event: a command waiting on a user event set to a negative status, in plain OpenCL with no
 * layer and no Direct3D, to tell a platform defect from dxcl's (the layer's acquire and release with
 * such a wait list, tests/conformance/acquire.c `failed_wait_list`).
 *
 * Build: make -C tests/platform    Run: build/platform/failed_event (OCL_ICD_VENDORS picks the platform)
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_CL(err, what)                                                                        \
    do {                                                                                           \
        if ((err) != CL_SUCCESS) {                                                                 \
            printf("FAIL %s -> cl error %d\n", what, (int)(err));                                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* The core spec: "a negative integer value causes all enqueued commands that
 * wait on this user event to be terminated", and a blocking call whose wait list holds a failed event
 * returns CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST. Each case runs in a child process: it prints what
 * every call returned and the events' final statuses, counts results the core spec does not allow, and an
 * alarm ends a hang with the case and step it hung in. Cases (docs/conformance.md, "A user event that fails"):
 *   before:   a write waiting on the user event, a read after the write, a marker after the read, a
 *             marker with no wait list after them (in-order), then the event fails; clFinish.
 *   after:    the same, with the read and the marker enqueued after the event failed.
 *   inorder:  a read and a marker with no wait list after the terminated ones, on an in-order queue.
 *   blocking: a blocking read whose wait list holds the terminated write.
 *   callback: a CL_COMPLETE callback on a command that is terminated, registered before and after.
 *   diamond:  the marker waits on the user event and on the write.
 *   released: the write's and the read's events released before the event fails.
 *   running:  a kernel that runs for a while, then (in-order) a write waiting on the user event; the
 *             event fails while the kernel runs; clFinish, then the kernel's status at once. The core
 *             spec: clFinish "blocks until all previously queued OpenCL commands in command_queue are
 *             issued to the associated device and have completed"; a kernel still running when it
 *             returns CL_SUCCESS breaks that (the layer's finish witness, docs/architecture.md, counts
 *             on it only while no command failed). */
static volatile const char *fe_step = "start";

static void fe_alarm(int sig) {
    (void)sig;
    char buf[160];
    int n = snprintf(buf, sizeof buf, "HUNG in %s (10 s)\n", (const char *)fe_step);
    (void)!write(1, buf, (size_t)n);
    _exit(3);
}

static cl_int fe_status(cl_event ev) {
    cl_int s = 1;
    cl_int e = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL);
    return e == CL_SUCCESS ? s : e;
}

static volatile int fe_called;
static volatile cl_int fe_called_status;
static void CL_CALLBACK fe_callback(cl_event ev, cl_int status, void *user) {
    (void)ev;
    (void)user;
    fe_called_status = status;
    __atomic_store_n(&fe_called, 1, __ATOMIC_RELEASE);
}

static const char *names[] = {"before", "after", "inorder", "blocking", "callback", "diamond", "released", "running"};
enum { CASES = 8 };
static const char *names_of(int c) { return names[c]; }

/* The "running" case: a single work-item spinning SPIN rounds of a dependent multiply-add (about a
 * quarter of a second on a GPU), timed alone first. */
static const char *spin_src =
    "__kernel void spin(__global uint *p, uint n) { uint x = p[0];"
    " for (uint i = 0; i < n; i++) x = x * 1664525u + 1013904223u; p[1] = x; }";

static int run_running(cl_context ctx, cl_device_id dev, cl_command_queue q, cl_mem buf) {
    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &spin_src, NULL, &err);
    CHECK_CL(err, "clCreateProgramWithSource");
    CHECK_CL(clBuildProgram(prog, 1, &dev, "", NULL, NULL), "clBuildProgram");
    cl_kernel k = clCreateKernel(prog, "spin", &err);
    CHECK_CL(err, "clCreateKernel");
    cl_uint n = 1u << 26;
    CHECK_CL(clSetKernelArg(k, 0, sizeof buf, &buf), "clSetKernelArg 0");
    CHECK_CL(clSetKernelArg(k, 1, sizeof n, &n), "clSetKernelArg 1");
    size_t one = 1;
    static unsigned char host[4096];
    int bad = 0;
    alarm(10);
    fe_step = "running: the kernel alone";
    double t0 = now_us();
    CHECK_CL(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, NULL), "clEnqueueNDRangeKernel");
    CHECK_CL(clFinish(q), "clFinish");
    double alone = now_us() - t0;
    cl_event gate = clCreateUserEvent(ctx, &err);
    CHECK_CL(err, "clCreateUserEvent");
    cl_event kev = NULL, w = NULL;
    fe_step = "running: enqueue";
    t0 = now_us();
    CHECK_CL(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, &kev), "clEnqueueNDRangeKernel");
    cl_int ew = clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof host, host, 1, &gate, &w);
    clFlush(q);
    fe_step = "running: clSetUserEventStatus(-1)";
    CHECK_CL(clSetUserEventStatus(gate, -1), "clSetUserEventStatus(-1)");
    double failed_at = now_us() - t0;
    fe_step = "running: clFinish";
    err = clFinish(q);
    double finished_at = now_us() - t0;
    cl_int ks = fe_status(kev);
    printf("running: kernel alone %.0f us; enqueue write %d; event failed at %.0f us, clFinish = %d at %.0f us; "
           "kernel status then %d, write status %d\n",
           alone, ew, failed_at, err, finished_at, ks, w ? fe_status(w) : 0);
    if (err == CL_SUCCESS && ks != CL_COMPLETE) {
        printf("running: clFinish returned CL_SUCCESS while the kernel before the terminated write still ran\n");
        bad++;
    }
    fe_step = "running: the kernel's end";
    clWaitForEvents(1, &kev);
    alarm(0);
    clReleaseEvent(kev);
    if (w)
        clReleaseEvent(w);
    clReleaseEvent(gate);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    return bad;
}

static int run_case(int c) {
    cl_platform_id plat;
    cl_device_id dev;
    CHECK_CL(clGetPlatformIDs(1, &plat, NULL), "clGetPlatformIDs");
    CHECK_CL(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL), "clGetDeviceIDs");
    char name[128] = "";
    clGetPlatformInfo(plat, CL_PLATFORM_VERSION, sizeof name, name, NULL);
    printf("platform: %s\n", name);
    signal(SIGALRM, fe_alarm);
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK_CL(err, "clCreateContext");
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK_CL(err, "clCreateCommandQueue");
    enum { N = 4096 };
    static unsigned char host[N], back[N];
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N, NULL, &err);
    CHECK_CL(err, "clCreateBuffer");
    int bad = 0; /* results the core spec does not allow */
    if (c == 7)
        bad = run_running(ctx, dev, q, buf);
    else {
        char step[96];
        alarm(10);
        cl_event gate = clCreateUserEvent(ctx, &err);
        CHECK_CL(err, "clCreateUserEvent");
        cl_event w = NULL, r = NULL, m = NULL, plain = NULL;
        snprintf(step, sizeof step, "%s: enqueue", names[c]);
        fe_step = step;
        cl_int ew = clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, N, host, 1, &gate, &w), er = 0, em = 0, eb = 0;
        fe_called = 0;
        if (c == 4)
            clSetEventCallback(w, CL_COMPLETE, fe_callback, NULL);
        if (c == 5) {
            cl_event both[2] = {gate, w};
            er = clEnqueueReadBuffer(q, buf, CL_FALSE, 0, N, back, 1, &w, &r);
            em = clEnqueueMarkerWithWaitList(q, 2, both, &m);
        } else if (c != 1) {
            er = clEnqueueReadBuffer(q, buf, CL_FALSE, 0, N, back, 1, &w, &r);
            em = clEnqueueMarkerWithWaitList(q, 1, &r, &m);
        }
        cl_event empty = NULL;
        if (c == 0) /* in-order after the waiting commands, no wait list, enqueued before the failure */
            clEnqueueMarkerWithWaitList(q, 0, NULL, &empty);
        clFlush(q);
        if (c == 6) {
            /* The write's and the read's events released before the failure: the platform still holds
             * its commands. */
            clReleaseEvent(w);
            clReleaseEvent(r);
            w = r = NULL;
        }
        snprintf(step, sizeof step, "%s: clSetUserEventStatus(-1)", names[c]);
        CHECK_CL(clSetUserEventStatus(gate, -1), "clSetUserEventStatus(-1)");
        if (c == 1) {
            er = clEnqueueReadBuffer(q, buf, CL_FALSE, 0, N, back, 1, &w, &r);
            em = clEnqueueMarkerWithWaitList(q, 1, &r, &m);
        }
        if (c == 2) {
            eb = clEnqueueReadBuffer(q, buf, CL_FALSE, 0, N, back, 0, NULL, &plain);
            clEnqueueMarkerWithWaitList(q, 0, NULL, &empty);
        }
        if (c == 3) {
            snprintf(step, sizeof step, "%s: the blocking read", names[c]);
            eb = clEnqueueReadBuffer(q, buf, CL_TRUE, 0, N, back, 1, &w, NULL);
        }
        printf("%s: enqueue write %d read %d marker %d; %s %d\n", names[c], ew, er, em,
               c == 3 ? "blocking read" : "plain read", eb);
        /* "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the read and write operations are blocking and the
         * execution status of any of the events in event_wait_list is a negative integer value". */
        bad += c == 3 && eb != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
        if (w) {
            snprintf(step, sizeof step, "%s: clWaitForEvents(write)", names[c]);
            err = clWaitForEvents(1, &w);
            printf("%s: clWaitForEvents(write) = %d\n", names[c], err);
            bad += err != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
        }
        if (m) {
            snprintf(step, sizeof step, "%s: clWaitForEvents(marker)", names[c]);
            err = clWaitForEvents(1, &m);
            printf("%s: clWaitForEvents(marker) = %d\n", names[c], err);
            bad += err != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
        }
        snprintf(step, sizeof step, "%s: clFinish", names[c]);
        err = clFinish(q);
        printf("%s: clFinish = %d; status write %d read %d marker %d plain read %d marker with no wait list %d\n",
               names[c], err, w ? fe_status(w) : 0, r ? fe_status(r) : 0, m ? fe_status(m) : 0, plain ? fe_status(plain) : 0,
               empty ? fe_status(empty) : 0);
        if (c == 4) {
            double t0 = now_us();
            while (!__atomic_load_n(&fe_called, __ATOMIC_ACQUIRE) && now_us() - t0 < 2e6)
                usleep(1000);
            printf("%s: completion callback registered before the failure %s, status %d\n", names[c],
                   fe_called ? "called" : "NOT called within 2 s", fe_called_status);
            /* "The callback function registered for a command_exec_callback_type value of CL_COMPLETE will be
             * called when the command has completed successfully or is abnormally terminated." */
            bad += !fe_called || fe_called_status >= 0;
            fe_called = 0;
            fe_called_status = 0;
            clSetEventCallback(w, CL_COMPLETE, fe_callback, NULL);
            t0 = now_us();
            while (!__atomic_load_n(&fe_called, __ATOMIC_ACQUIRE) && now_us() - t0 < 2e6)
                usleep(1000);
            printf("%s: completion callback registered after the failure %s, status %d\n", names[c],
                   fe_called ? "called" : "NOT called within 2 s", fe_called_status);
            bad += !fe_called || fe_called_status >= 0;
        }
        alarm(0);
        clReleaseEvent(gate);
        if (w)
            clReleaseEvent(w);
        if (r)
            clReleaseEvent(r);
        if (m)
            clReleaseEvent(m);
        if (plain)
            clReleaseEvent(plain);
        if (empty)
            clReleaseEvent(empty);
    }
    clReleaseMemObject(buf);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    if (bad)
        printf("%s: %d results the core spec does not allow\n", names_of(c), bad);
    return bad != 0;
}

/* Each case in a child process: a hang ends that child only. */
int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    int hung = 0;
    for (int c = 0; c < CASES; c++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(run_case(c));
        int st = 0;
        waitpid(pid, &st, 0);
        hung += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    if (hung)
        printf("RESULT failed_event: %d of %d cases hung, crashed or broke a core rule\n", hung, CASES);
    else
        printf("RESULT failed_event: every call returned in all %d cases\n", CASES);
    return hung != 0;
}
