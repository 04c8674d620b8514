/* tchar.h: hand-written (not generated). The generic-text names of the Windows C runtime, mapped to
 * their char versions: the configuration Windows builds without _UNICODE (then called MBCS), with
 * text in UTF-8 as everywhere on Linux.
 *
 * _UNICODE is refused rather than half-supported: _tmain would become wmain, which nothing on Linux
 * calls, and TCHAR would be WCHAR, which is 16-bit (as on Windows) while the C library's wide
 * functions (wprintf, wcslen, …) take 32-bit wchar_t, so no _t function could map to them. */
#ifndef DXCL_TCHAR_H_
#define DXCL_TCHAR_H_

#ifdef _UNICODE
#error "dxcl's <tchar.h> supports only char text (UTF-8): build without _UNICODE"
#endif

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The same type windows.h gives TCHAR without UNICODE (repeating a typedef is allowed). */
#ifndef UNICODE
typedef char TCHAR;
#endif
typedef char _TCHAR;
typedef signed char _TSCHAR;
typedef unsigned char _TUCHAR;
typedef char _TXCHAR;
typedef int _TINT;
#define _TEOF EOF

#define __T(x) x
#define _T(x) __T(x)
#define _TEXT(x) __T(x)
#ifndef TEXT
#define TEXT(x) x
#endif

#define _tmain main

/* Formatted I/O. _sntprintf is C's snprintf, which always terminates the string; Microsoft's
 * _snprintf does not when the text is truncated. */
#define _tprintf printf
#define _ftprintf fprintf
#define _stprintf sprintf
#define _sntprintf snprintf
#define _vtprintf vprintf
#define _vftprintf vfprintf
#define _vstprintf vsprintf
#define _vsntprintf vsnprintf
#define _tscanf scanf
#define _ftscanf fscanf
#define _stscanf sscanf

/* Strings. The case-insensitive comparisons are POSIX's strcasecmp and strncasecmp (<strings.h>),
 * Microsoft's _stricmp and _strnicmp under their Linux names. */
#define _tcslen strlen
#define _tcscpy strcpy
#define _tcsncpy strncpy
#define _tcscat strcat
#define _tcsncat strncat
#define _tcscmp strcmp
#define _tcsncmp strncmp
#define _tcsicmp strcasecmp
#define _tcsnicmp strncasecmp
#define _tcscoll strcoll
#define _tcschr strchr
#define _tcsrchr strrchr
#define _tcsstr strstr
#define _tcsspn strspn
#define _tcscspn strcspn
#define _tcspbrk strpbrk
#define _tcstok strtok
#define _tcserror strerror
#define _tcsftime strftime

/* Numbers. */
#define _ttoi atoi
#define _tstoi atoi
#define _ttol atol
#define _tstol atol
#define _ttoll atoll
#define _tstoll atoll
#define _ttof atof
#define _tstof atof
#define _tcstol strtol
#define _tcstoul strtoul
#define _tcstoll strtoll
#define _tcstoull strtoull
#define _tcstod strtod
#define _tcstof strtof

/* Streams, files and the environment. */
#define _tfopen fopen
#define _tfreopen freopen
#define _fgetts fgets
#define _fputts fputs
#define _fgettc fgetc
#define _fputtc fputc
#define _gettc getc
#define _puttc putc
#define _gettchar getchar
#define _puttchar putchar
#define _putts puts
#define _ungettc ungetc
#define _tremove remove
#define _trename rename
#define _tperror perror
#define _tgetenv getenv
#define _tsystem system

/* Character classes. */
#define _istalnum isalnum
#define _istalpha isalpha
#define _istcntrl iscntrl
#define _istdigit isdigit
#define _istgraph isgraph
#define _istlower islower
#define _istprint isprint
#define _istpunct ispunct
#define _istspace isspace
#define _istupper isupper
#define _istxdigit isxdigit
#define _totlower tolower
#define _totupper toupper

#endif /* DXCL_TCHAR_H_ */
