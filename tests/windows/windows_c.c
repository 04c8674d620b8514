/* <windows.h> and <tchar.h> from C11: the types' sizes, the HRESULT and memory macros, GUID
 * comparison, min/max, the generic-text names, Sleep and OutputDebugString. Built with
 * -std=c11 -Wall -Wextra -Werror against the installed headers and run under valgrind by
 * `make test-c`, once as is and once with -DUNICODE (the W forms of TEXT and OutputDebugString).
 *
 *   windows_c FILE   OutputDebugString's text goes to stderr, which is sent to FILE and read back;
 *                    check failures are printed on stdout for that reason. */
#include <windows.h>
#include <tchar.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

static int passed, failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            printf("%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                        \
        }                                                                                          \
    } while (0)

/* Sizes as on 64-bit Windows (LLP64): a port's structs keep their layout. */
_Static_assert(sizeof(DWORD) == 4 && sizeof(LONG) == 4 && sizeof(ULONG) == 4, "32-bit longs");
_Static_assert(sizeof(WORD) == 2 && sizeof(WCHAR) == 2 && sizeof(SHORT) == 2, "16-bit");
_Static_assert(sizeof(BYTE) == 1 && sizeof(BOOLEAN) == 1 && sizeof(CHAR) == 1, "bytes");
_Static_assert(sizeof(LONGLONG) == 8 && sizeof(DWORD64) == 8 && sizeof(LARGE_INTEGER) == 8, "64-bit");
_Static_assert(sizeof(ULARGE_INTEGER) == 8 && sizeof(ULONG_PTR) == sizeof(void *), "pointer-sized");
_Static_assert(sizeof(LONG_PTR) == 8 && sizeof(SIZE_T) == 8 && sizeof(GUID) == 16, "LLP64");
_Static_assert(MAX_PATH == 260 && TRUE == 1 && FALSE == 0 && INFINITE == 0xFFFFFFFF, "constants");

/* HRESULT_FROM_WIN32 is a constant expression, usable as a case label. */
static const char *name_of(HRESULT hr)
{
    switch (hr) {
    case HRESULT_FROM_WIN32(ERROR_INVALID_PARAMETER):
        return "E_INVALIDARG";
    case HRESULT_FROM_WIN32(ERROR_ACCESS_DENIED):
        return "E_ACCESSDENIED";
    default:
        return "other";
    }
}

DEFINE_GUID(GUID_Test, 0x01234567, 0x89ab, 0xcdef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef);

static void test_hresult(void)
{
    CHECK(SUCCEEDED(S_OK) && SUCCEEDED(S_FALSE) && FAILED(E_FAIL) && !FAILED(S_FALSE));
    CHECK(MAKE_HRESULT(SEVERITY_ERROR, FACILITY_WIN32, ERROR_INVALID_PARAMETER) == E_INVALIDARG);
    CHECK(MAKE_HRESULT(SEVERITY_SUCCESS, FACILITY_NULL, 1) == S_FALSE);
    CHECK(MAKE_HRESULT(SEVERITY_ERROR, FACILITY_DXGI, 1) == DXGI_ERROR_INVALID_CALL);
    CHECK(MAKE_HRESULT(SEVERITY_ERROR, FACILITY_D3D11, 2) == D3D11_ERROR_FILE_NOT_FOUND);
    CHECK(HRESULT_FROM_WIN32(ERROR_OUTOFMEMORY) == E_OUTOFMEMORY);
    CHECK(HRESULT_FROM_WIN32(ERROR_INVALID_HANDLE) == E_HANDLE);
    CHECK(HRESULT_FROM_WIN32(ERROR_SUCCESS) == S_OK);
    CHECK(HRESULT_FROM_WIN32(E_FAIL) == E_FAIL); /* already an HRESULT: unchanged */
    CHECK(HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND) == (HRESULT)0x80070002);
    CHECK(strcmp(name_of(E_INVALIDARG), "E_INVALIDARG") == 0 && strcmp(name_of(E_FAIL), "other") == 0);
    CHECK(HRESULT_CODE(E_INVALIDARG) == ERROR_INVALID_PARAMETER);
    CHECK(HRESULT_FACILITY(E_INVALIDARG) == FACILITY_WIN32 && HRESULT_FACILITY(DXGI_ERROR_NOT_FOUND) == FACILITY_DXGI);
    CHECK(HRESULT_SEVERITY(E_NOTIMPL) == SEVERITY_ERROR && HRESULT_SEVERITY(S_FALSE) == SEVERITY_SUCCESS);
    CHECK(IS_ERROR(E_POINTER) && !IS_ERROR(S_OK));
    CHECK(FAILED(E_PENDING) && E_BOUNDS == (HRESULT)0x8000000B && E_ILLEGAL_METHOD_CALL == (HRESULT)0x8000000E);
}

static void test_memory(void)
{
    BYTE buf[16];
    FillMemory(buf, sizeof buf, 0xAB);
    CHECK(buf[0] == 0xAB && buf[15] == 0xAB);
    ZeroMemory(buf, 8);
    CHECK(buf[7] == 0 && buf[8] == 0xAB);
    const BYTE src[4] = {1, 2, 3, 4};
    CopyMemory(buf, src, sizeof src);
    CHECK(memcmp(buf, src, 4) == 0);
    MoveMemory(buf + 1, buf, 4); /* overlapping */
    CHECK(buf[0] == 1 && buf[1] == 1 && buf[2] == 2 && buf[4] == 4);
    CHECK(SecureZeroMemory(buf, sizeof buf) == buf && buf[0] == 0 && buf[15] == 0);

    CHECK(max(3, 7) == 7 && min(3, 7) == 3 && max(-1.5, -2.0) == -1.5);
    CHECK(LOWORD(0x12345678) == 0x5678 && HIWORD(0x12345678) == 0x1234);
    CHECK(LOBYTE(0x1234) == 0x34 && HIBYTE(0x1234) == 0x12 && MAKEWORD(0x34, 0x12) == 0x1234);
    CHECK(MAKELONG(0x5678, 0x1234) == 0x12345678 && ARRAYSIZE(buf) == 16 && _countof(src) == 4);

    LARGE_INTEGER li;
    li.QuadPart = 0x0000000500000007LL;
    CHECK(li.LowPart == 7 && li.HighPart == 5);
    ULARGE_INTEGER uli;
    uli.QuadPart = 0xFFFFFFFF00000001ULL;
    CHECK(uli.LowPart == 1 && uli.HighPart == 0xFFFFFFFF);
}

static void test_guid(void)
{
    GUID copy = GUID_Test;
    GUID other = GUID_Test;
    other.Data4[7] ^= 1;
    CHECK(IsEqualGUID(&copy, &GUID_Test) && !IsEqualGUID(&other, &GUID_Test));
    CHECK(InlineIsEqualGUID(&copy, &GUID_Test) && !InlineIsEqualGUID(&other, &GUID_Test));
    CHECK(IsEqualIID(&IID_IUnknown, &IID_IUnknown) && !IsEqualIID(&IID_IUnknown, &GUID_NULL));
    CHECK(IsEqualCLSID(&GUID_NULL, &CLSID_NULL) && GUID_Test.Data1 == 0x01234567 && GUID_Test.Data4[7] == 0xef);
}

static void test_tchar(void)
{
    _Static_assert(sizeof(_TCHAR) == 1, "_TCHAR is char");
    _TCHAR buf[64];
    const _TCHAR *word = _T("Direct3D");
    CHECK(_tcslen(word) == 8 && _tcscmp(word, _TEXT("Direct3D")) == 0 && _tcsicmp(word, _T("DIRECT3D")) == 0);
    CHECK(_tcsncmp(word, _T("Dirt"), 3) == 0 && _tcschr(word, _T('3')) == word + 6 && _tcsstr(word, _T("3D")));
    CHECK(_sntprintf(buf, _countof(buf), _T("%s %d"), word, 11) == 11 && _tcscmp(buf, _T("Direct3D 11")) == 0);
    CHECK(_stprintf(buf, _T("%u"), 1234u) == 4 && _ttoi(buf) == 1234 && _tcstol(_T("ff"), NULL, 16) == 255);
    _tcscpy(buf, _T("a"));
    _tcscat(buf, _T("B"));
    CHECK(_tcscmp(buf, _T("aB")) == 0 && _istdigit(_T('7')) && !_istalpha(_T('7')) && _totupper(_T('q')) == 'Q');
#ifdef UNICODE
    /* UNICODE: TCHAR, TEXT and OutputDebugString take the 16-bit WCHAR forms. */
    _Static_assert(sizeof(TCHAR) == 2, "TCHAR is WCHAR under UNICODE");
    const TCHAR *wide = TEXT("w\u00e9");
    CHECK(wide[0] == 'w' && wide[1] == 0xe9 && wide[2] == 0);
#else
    _Static_assert(sizeof(TCHAR) == 1, "TCHAR is char");
    const TCHAR *narrow = TEXT("abc");
    CHECK(_tcslen(narrow) == 3);
#endif
}

static double now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_sleep(void)
{
    const double start = now();
    Sleep(30);
    const double slept = now() - start;
    CHECK(slept >= 0.029 && slept < 5.0);
    Sleep(0);
}

/* OutputDebugString writes to stderr: redirect it to `path`, write, read back. */
static void test_debug_output(const char *path)
{
    if (!freopen(path, "w", stderr)) {
        CHECK(!"freopen(stderr)");
        return;
    }
    OutputDebugStringA("A: plain\n");
    /* "W: é € 𝄞 ?" in UTF-16, the last one an unpaired high surrogate. */
    static const WCHAR w[] = {'W', ':', ' ', 0xe9, ' ', 0x20ac, ' ', 0xd834, 0xdd1e, ' ', 0xd800, '\n', 0};
    OutputDebugStringW(w);
    OutputDebugStringW(NULL);
    OutputDebugString(TEXT("T: generic\n"));
    fflush(stderr);

    FILE *f = fopen(path, "rb");
    char got[256] = {0};
    size_t n = f ? fread(got, 1, sizeof got - 1, f) : 0;
    if (f)
        fclose(f);
    const char *want = "A: plain\nW: \xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e \xef\xbf\xbd\nT: generic\n";
    CHECK(n == strlen(want) && memcmp(got, want, n) == 0);
}

int _tmain(int argc, _TCHAR *argv[])
{
    test_hresult();
    test_memory();
    test_guid();
    test_tchar();
    test_sleep();
    if (argc > 1)
        test_debug_output(argv[1]);
    else
        CHECK(!"usage: windows_c FILE");
    printf("windows_c: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
