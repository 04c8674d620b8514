/* dxclcl.dll, the Windows side of dxcl's Wine bridge: each export packs its arguments into one
 * unix call (unixlib.h); callbacks into the program run on a thread of this side. */
#ifndef DXCL_WINE_BRIDGE_H
#define DXCL_WINE_BRIDGE_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#define CL_USE_DEPRECATED_OPENCL_2_1_APIS
#define CL_USE_DEPRECATED_OPENCL_2_2_APIS
#include <windows.h>
#include <CL/cl.h>
#include "unixlib.h"

/* Runs one core entry point on the unix side. */
void dxcl_unix_call(struct dxcl_call *call);
/* Starts the thread that runs callbacks into the program (once). */
void dxcl_start_callbacks(void);

#endif
