/* windows.h: hand-written (not generated). The part of the Windows SDK's <windows.h> that Direct3D
 * and OpenCL code uses besides the window system: base types, HRESULT helpers, memory macros, GUID
 * comparison, OutputDebugString, Sleep and the calling-convention and interface macros. No window,
 * message, file or process API: a program that needs one fails to compile rather than link to a
 * stub. The base types, GUID, IUnknown, __uuidof and IID_PPV_ARGS come from the generated
 * <dxcl/win_types.h> and <unknwn.h>, which this includes (as the SDK's windows.h reaches IUnknown). */
#ifndef DXCL_WINDOWS_H_
#define DXCL_WINDOWS_H_

#include <dxcl/win_types.h>
#include <unknwn.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>
#include <time.h>

#ifdef __cplusplus
#include <type_traits>
#endif

/* ---- calling conventions and declaration macros --------------------------------------------- */
/* x86-64 has one calling convention, so these only have to parse. */
#ifndef CALLBACK
#define CALLBACK
#endif
#ifndef APIENTRY
#define APIENTRY WINAPI
#endif
#ifndef WINAPIV
#define WINAPIV
#endif
#ifndef __stdcall
#define __stdcall
#endif
#ifndef __cdecl
#define __cdecl
#endif
#ifndef VOID
#define VOID void
#endif
#ifndef CONST
#define CONST const
#endif
#ifndef EXTERN_C
#ifdef __cplusplus
#define EXTERN_C extern "C"
#else
#define EXTERN_C extern
#endif
#endif
#ifndef DECLSPEC_NOVTABLE
#define DECLSPEC_NOVTABLE
#endif
#ifndef UNREFERENCED_PARAMETER
#define UNREFERENCED_PARAMETER(P) ((void)(P))
#endif

/* Method declarations and definitions in the SDK's spelling (objbase.h), for classes that implement
 * COM interfaces. STDMETHOD and PURE are the C++ forms; C declares interfaces with vtables instead. */
#define STDMETHODIMP HRESULT STDMETHODCALLTYPE
#define STDMETHODIMP_(type) type STDMETHODCALLTYPE
#ifdef __cplusplus
#define STDMETHOD(method) virtual HRESULT STDMETHODCALLTYPE method
#define STDMETHOD_(type, method) virtual type STDMETHODCALLTYPE method
#define PURE = 0
#define THIS_
#define THIS void
#endif

/* SAL annotations mark parameters for Microsoft's analyser; GCC and Clang have nothing to do
 * with them, so they expand to nothing (the commonest ones, as Direct3D code uses them). */
#ifndef _In_
#define _In_
#define _In_opt_
#define _In_z_
#define _In_reads_(n)
#define _In_reads_opt_(n)
#define _In_reads_bytes_(n)
#define _In_reads_bytes_opt_(n)
#define _Out_
#define _Out_opt_
#define _Out_writes_(n)
#define _Out_writes_opt_(n)
#define _Out_writes_bytes_(n)
#define _Out_writes_bytes_opt_(n)
#define _Inout_
#define _Inout_opt_
#define _Outptr_
#define _Outptr_opt_
#define _Outptr_result_maybenull_
#define _COM_Outptr_
#define _COM_Outptr_opt_
#define _Check_return_
#define _Ret_maybenull_
#define _Success_(expr)
#define _Use_decl_annotations_
#define _Printf_format_string_
#endif

/* ---- base types beyond those the D3D headers need (dxcl/win_types.h has the rest) ------------ */
typedef char CHAR;
typedef unsigned char UCHAR;
typedef int16_t SHORT;
typedef uint8_t BOOLEAN;
typedef double DOUBLE;
typedef int8_t INT8;
typedef int16_t INT16;
typedef uint16_t UINT16;
typedef int32_t INT32;
typedef uint32_t UINT32;
typedef int32_t LONG32;
typedef uint32_t ULONG32;
typedef uint32_t DWORD32;
typedef int64_t LONG64;
typedef uint64_t ULONG64;
typedef uint64_t DWORD64;
typedef uint64_t DWORDLONG;
/* The pointer-sized integers are 64-bit, as on 64-bit Windows. */
typedef intptr_t INT_PTR;
typedef uintptr_t UINT_PTR;
typedef intptr_t LONG_PTR;
typedef uintptr_t ULONG_PTR;
typedef ULONG_PTR DWORD_PTR;
typedef LONG_PTR SSIZE_T;
typedef LONG SCODE;

typedef void *PVOID;
typedef BYTE *PBYTE, *LPBYTE;
typedef BOOL *PBOOL, *LPBOOL;
typedef WORD *PWORD, *LPWORD;
typedef DWORD *PDWORD, *LPDWORD;
typedef INT *PINT, *LPINT;
typedef UINT *PUINT;
typedef LONG *PLONG, *LPLONG;
typedef ULONG *PULONG;
typedef FLOAT *PFLOAT;
typedef CHAR *PCHAR, *PSTR;
typedef const CHAR *PCSTR;
typedef WCHAR *PWCHAR, *PWSTR;
typedef const WCHAR *PCWSTR;
typedef HANDLE *PHANDLE, *LPHANDLE;
typedef HMODULE HINSTANCE;

typedef union ULARGE_INTEGER {
    struct {
        DWORD LowPart;
        DWORD HighPart;
    };
    ULONGLONG QuadPart;
} ULARGE_INTEGER;
typedef LARGE_INTEGER *PLARGE_INTEGER;
typedef ULARGE_INTEGER *PULARGE_INTEGER;

/* Generic text: UNICODE selects the WCHAR forms, as on Windows. WCHAR is 16-bit here as there, but
 * C++ spells 16-bit literals u"" (char16_t, a type of its own), so in C++ TEXT() under UNICODE is a
 * pointer converted to const WCHAR * and cannot initialise an array; in C, char16_t is WCHAR's type. */
#ifdef UNICODE
typedef WCHAR TCHAR;
#ifdef __cplusplus
#define DXCL_TEXT_(quote) (reinterpret_cast<const WCHAR *>(u##quote))
#else
#define DXCL_TEXT_(quote) u##quote
#endif
#else
typedef char TCHAR;
#define DXCL_TEXT_(quote) quote
#endif
#ifndef TEXT
#define TEXT(quote) DXCL_TEXT_(quote)
#endif
typedef TCHAR *LPTSTR, *PTSTR;
typedef const TCHAR *LPCTSTR, *PCTSTR;

/* ---- constants ------------------------------------------------------------------------------- */
#define MAX_PATH 260
#define INFINITE 0xFFFFFFFF
#define INVALID_HANDLE_VALUE ((HANDLE)(LONG_PTR)-1)

/* Win32 error codes (winerror.h), the ones HRESULT_FROM_WIN32 commonly wraps. */
#define ERROR_SUCCESS 0
#define NO_ERROR 0
#define ERROR_INVALID_FUNCTION 1
#define ERROR_FILE_NOT_FOUND 2
#define ERROR_PATH_NOT_FOUND 3
#define ERROR_ACCESS_DENIED 5
#define ERROR_INVALID_HANDLE 6
#define ERROR_NOT_ENOUGH_MEMORY 8
#define ERROR_INVALID_DATA 13
#define ERROR_OUTOFMEMORY 14
#define ERROR_NOT_SUPPORTED 50
#define ERROR_INVALID_PARAMETER 87
#define ERROR_INSUFFICIENT_BUFFER 122
#define ERROR_ALREADY_EXISTS 183
#define ERROR_MORE_DATA 234
#define ERROR_TIMEOUT 1460

/* ---- HRESULT --------------------------------------------------------------------------------- */
#define SEVERITY_SUCCESS 0
#define SEVERITY_ERROR 1
#define FACILITY_NULL 0
#define FACILITY_RPC 1
#define FACILITY_DISPATCH 2
#define FACILITY_STORAGE 3
#define FACILITY_ITF 4
#define FACILITY_WIN32 7
#define FACILITY_WINDOWS 8
#define FACILITY_D3D10 0x879
#define FACILITY_DXGI 0x87a
#define FACILITY_D3D11 0x87c

#define MAKE_HRESULT(sev, fac, code) \
    ((HRESULT)(((uint32_t)(sev) << 31) | ((uint32_t)(fac) << 16) | ((uint32_t)(code))))
#define MAKE_SCODE(sev, fac, code) ((SCODE)MAKE_HRESULT(sev, fac, code))
#define HRESULT_CODE(hr) ((hr) & 0xFFFF)
#define HRESULT_FACILITY(hr) (((hr) >> 16) & 0x1FFF)
#define HRESULT_SEVERITY(hr) (((hr) >> 31) & 0x1)
#define SCODE_CODE(sc) HRESULT_CODE(sc)
#define SCODE_FACILITY(sc) HRESULT_FACILITY(sc)
#define SCODE_SEVERITY(sc) HRESULT_SEVERITY(sc)
#define IS_ERROR(status) ((uint32_t)(status) >> 31 == SEVERITY_ERROR)
/* A macro, not a function, so that it stays a constant expression (case labels). Values that are
 * already HRESULTs (zero or negative) pass through unchanged, as the SDK documents. */
#define HRESULT_FROM_WIN32(x)                                                                       \
    ((HRESULT)(x) <= 0 ? (HRESULT)(x)                                                               \
                       : (HRESULT)(((uint32_t)(x) & 0x0000FFFF) | (FACILITY_WIN32 << 16) | 0x80000000u))

#define NOERROR 0
#define E_PENDING ((HRESULT)0x8000000A)
#define E_BOUNDS ((HRESULT)0x8000000B)
#define E_CHANGED_STATE ((HRESULT)0x8000000C)
#define E_ILLEGAL_STATE_CHANGE ((HRESULT)0x8000000D)
#define E_ILLEGAL_METHOD_CALL ((HRESULT)0x8000000E)

/* ---- memory ---------------------------------------------------------------------------------- */
#define MoveMemory(dst, src, len) memmove((dst), (src), (len))
#define CopyMemory(dst, src, len) memcpy((dst), (src), (len))
#define FillMemory(dst, len, fill) memset((dst), (fill), (len))
#define ZeroMemory(dst, len) memset((dst), 0, (len))
#define RtlMoveMemory MoveMemory
#define RtlCopyMemory CopyMemory
#define RtlFillMemory FillMemory
#define RtlZeroMemory ZeroMemory

/* Writes through a volatile pointer, so that the compiler cannot drop the clearing of a buffer it
 * sees no later read of (the reason SecureZeroMemory exists). */
static inline PVOID SecureZeroMemory(PVOID ptr, SIZE_T cnt)
{
    volatile BYTE *p = (volatile BYTE *)ptr;
    while (cnt--)
        *p++ = 0;
    return ptr;
}

/* ---- small arithmetic macros ----------------------------------------------------------------- */
#define LOBYTE(w) ((BYTE)(((DWORD_PTR)(w)) & 0xff))
#define HIBYTE(w) ((BYTE)((((DWORD_PTR)(w)) >> 8) & 0xff))
#define LOWORD(l) ((WORD)(((DWORD_PTR)(l)) & 0xffff))
#define HIWORD(l) ((WORD)((((DWORD_PTR)(l)) >> 16) & 0xffff))
#define MAKEWORD(a, b) ((WORD)(((BYTE)(((DWORD_PTR)(a)) & 0xff)) | ((WORD)((BYTE)(((DWORD_PTR)(b)) & 0xff))) << 8))
#define MAKELONG(a, b) ((LONG)(((WORD)(((DWORD_PTR)(a)) & 0xffff)) | ((DWORD)((WORD)(((DWORD_PTR)(b)) & 0xffff))) << 16))
#ifndef ARRAYSIZE
#define ARRAYSIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#ifndef _countof
#define _countof(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* min and max, unless NOMINMAX. In C they are the SDK's macros. In C++ they are function templates:
 * libstdc++ #undefs min and max in the first standard header included after them, and, had they
 * survived, would break std::numeric_limits<T>::max() in later headers (MSVC's library parenthesises
 * those names; libstdc++ does not). The templates take mixed types and return the common type, as the
 * macros' conditional expression does, and still lose to std::min/std::max where both apply. */
#ifndef NOMINMAX
#ifdef __cplusplus
extern "C++" {
template <typename A, typename B>
constexpr typename std::common_type<A, B>::type max(A a, B b)
{
    return a > b ? a : b;
}
template <typename A, typename B>
constexpr typename std::common_type<A, B>::type min(A a, B b)
{
    return a < b ? a : b;
}
}
#else
#ifndef max
#define max(a, b) (((a) > (b)) ? (a) : (b))
#endif
#ifndef min
#define min(a, b) (((a) < (b)) ? (a) : (b))
#endif
#endif
#endif

/* ---- GUIDs ----------------------------------------------------------------------------------- */
/* dxcl defines every GUID as a static constant in each file that names it (as its headers do for the
 * IIDs), so DEFINE_GUID does not depend on INITGUID and no file has to own the definition. */
#define DEFINE_GUID(name, l, w1, w2, b1, b2, b3, b4, b5, b6, b7, b8) \
    static const GUID name DXCL_UNUSED = {l, w1, w2, {b1, b2, b3, b4, b5, b6, b7, b8}}

static const GUID GUID_NULL DXCL_UNUSED = {0, 0, 0, {0, 0, 0, 0, 0, 0, 0, 0}};
#define IID_NULL GUID_NULL
#define CLSID_NULL GUID_NULL

#ifdef __cplusplus
static inline int InlineIsEqualGUID(REFGUID a, REFGUID b)
{
    return a.Data1 == b.Data1 && a.Data2 == b.Data2 && a.Data3 == b.Data3 &&
           memcmp(a.Data4, b.Data4, sizeof a.Data4) == 0;
}
#else
static inline int InlineIsEqualGUID(REFGUID a, REFGUID b)
{
    return a->Data1 == b->Data1 && a->Data2 == b->Data2 && a->Data3 == b->Data3 &&
           memcmp(a->Data4, b->Data4, sizeof a->Data4) == 0;
}
#endif
#define IsEqualCLSID(a, b) IsEqualGUID(a, b)

/* ---- debugging output and sleeping ----------------------------------------------------------- */
/* Without an attached debugger Windows drops OutputDebugString's text; here it goes to stderr, where
 * a Linux developer looks. */
static inline void OutputDebugStringA(LPCSTR text)
{
    if (text)
        fputs(text, stderr);
}

/* WCHAR text is UTF-16: written to stderr as UTF-8, an unpaired surrogate as U+FFFD. */
static inline void OutputDebugStringW(LPCWSTR text)
{
    if (!text)
        return;
    for (const WCHAR *p = text; *p; p++) {
        uint32_t c = *p;
        if (c >= 0xD800 && c <= 0xDBFF && p[1] >= 0xDC00 && p[1] <= 0xDFFF) {
            c = 0x10000 + ((c - 0xD800) << 10) + (uint32_t)(p[1] - 0xDC00);
            p++;
        } else if (c >= 0xD800 && c <= 0xDFFF) {
            c = 0xFFFD;
        }
        char out[4];
        size_t n;
        if (c < 0x80) {
            out[0] = (char)c;
            n = 1;
        } else if (c < 0x800) {
            out[0] = (char)(0xC0 | (c >> 6));
            out[1] = (char)(0x80 | (c & 0x3F));
            n = 2;
        } else if (c < 0x10000) {
            out[0] = (char)(0xE0 | (c >> 12));
            out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[2] = (char)(0x80 | (c & 0x3F));
            n = 3;
        } else {
            out[0] = (char)(0xF0 | (c >> 18));
            out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
            out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[3] = (char)(0x80 | (c & 0x3F));
            n = 4;
        }
        fwrite(out, 1, n, stderr);
    }
}

#ifdef UNICODE
#define OutputDebugString OutputDebugStringW
#else
#define OutputDebugString OutputDebugStringA
#endif

/* Sleep(0) gives up the rest of the time slice and Sleep(INFINITE) never returns, as on Windows. C11
 * threads, so C11 and C++ builds need no POSIX feature macros. A signal does not shorten the sleep. */
static inline void Sleep(DWORD milliseconds)
{
    while (milliseconds == INFINITE) {
        struct timespec day = {86400, 0};
        thrd_sleep(&day, NULL);
    }
    if (milliseconds == 0) {
        thrd_yield();
        return;
    }
    struct timespec left = {(time_t)(milliseconds / 1000), (long)(milliseconds % 1000) * 1000000L};
    struct timespec rest;
    while (thrd_sleep(&left, &rest) == -1)
        left = rest;
}

#endif /* DXCL_WINDOWS_H_ */
