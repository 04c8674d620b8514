/* opencl.dll for a Wine prefix: every export forwards to dxclcl.dll (opencl.def, generated). */
#include <windows.h>

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, void *reserved)
{
    (void)instance; (void)reason; (void)reserved;
    return TRUE;
}
