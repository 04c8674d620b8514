/* The sanitizers' canary: proves that the valgrind command and the ASan+UBSan build the suite runs under
 * catch what they are there to catch, with the suite's suppressions loaded (canary.sh runs it, `make
 * test-conformance` runs canary.sh). The errors are made in libdxcl_canary.so (canary_lib.c):
 *
 *   canary clean      no error (a heap block and an OpenCL context and buffer, all released): must pass
 *   canary leak       a heap block lost
 *   canary overread   one byte read past the end of a heap block
 *   canary cl-leak    an OpenCL context and buffer never released (allocated inside the platform)
 *   canary overflow   signed integer overflow (UBSan; valgrind does not look for it)
 *
 * Prints "canary <mode>: done" when it reaches its end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dxcl_canary_leak(void);
int dxcl_canary_overread(void);
int dxcl_canary_overflow(int n);
int dxcl_canary_cl_objects(int release);

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int v = 0;
    if (strcmp(mode, "clean") == 0) {
        char *p = malloc(48);
        free(p);
        if (!dxcl_canary_cl_objects(1)) {
            fprintf(stderr, "canary clean: no OpenCL platform or device\n");
            return 2;
        }
    } else if (strcmp(mode, "leak") == 0) {
        dxcl_canary_leak();
    } else if (strcmp(mode, "overread") == 0) {
        v = dxcl_canary_overread();
    } else if (strcmp(mode, "cl-leak") == 0) {
        if (!dxcl_canary_cl_objects(0)) {
            fprintf(stderr, "canary cl-leak: no OpenCL platform or device\n");
            return 2;
        }
    } else if (strcmp(mode, "overflow") == 0) {
        v = dxcl_canary_overflow(argc);
    } else {
        fprintf(stderr, "usage: canary clean|leak|overread|cl-leak|overflow\n");
        return 2;
    }
    printf("canary %s: done (%d)\n", mode, v);
    return 0;
}
