/* wrl.h: hand-written (not generated). The Windows Runtime C++ Template Library's umbrella header;
 * dxcl has its client part only, Microsoft::WRL::ComPtr (<wrl/client.h>). The rest of WRL
 * (RuntimeClass, Make, events, wrappers) serves WinRT components and is not here. */
#ifndef DXCL_WRL_H_
#define DXCL_WRL_H_

#include <wrl/client.h>

#endif /* DXCL_WRL_H_ */
