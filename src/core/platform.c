#pragma once
/* A part of core.c, included after the error functions it reports with;
 * the include below is for editors. */
#include "core.c"

/* ===================================================================== */
/*  Platform: threads, CPU count, read-only file mapping, and files        */
/*  written under a temporary name then renamed. One interface, a POSIX   */
/*  and a Win32 implementation; nothing else in sdx calls the OS.          */
/* ===================================================================== */
/*   sdx__mutex / sdx__cond      lock, unlock, wait, signal, broadcast
 *   sdx__thread_start/_join     a thread running fn(arg)
 *   sdx__cpu_count()            online logical CPUs, 1..256
 *   sdx__map_file/_unmap        a whole regular file, read-only
 *   sdx__tmpfile_*              create "path.tmp.*" exclusively, write,
 *                               commit (rename over path) or abort
 *   sdx__map_release(m, p, n)   drop mapped pages from the process's
 *                               memory; they are read again on demand
 *   sdx__anon_reserve/_drop/_free  zeroed, writable address space whose
 *                               pages are taken as written (where a read
 *                               callback's bytes go); _drop gives whole
 *                               pages back, their contents then undefined
 *   sdx__peak_rss()             the process's peak resident memory
 *   sdx__path_kind(path)        none, regular file, directory or other
 *   sdx__last_separator(path)   the last '/' (or '\' on Windows)
 *   sdx__counter_add1/_read     a counter any thread may bump and read   */

#if defined(_WIN32)
#define SDX__WIN32 1
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#include <psapi.h>
#else
#define SDX__WIN32 0
#include <pthread.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/resource.h>
#endif

typedef void (*sdx__thread_fn)(void *arg);

enum { SDX__PATH_NONE, SDX__PATH_FILE, SDX__PATH_DIR, SDX__PATH_OTHER };

#if SDX__WIN32

/* ---- Win32 ------------------------------------------------------------ */
/* SRW locks and condition variables (Vista and later): no destruction
 * needed, no allocation, and they cannot fail. */
typedef SRWLOCK sdx__mutex;
#define SDX__MUTEX_INIT SRWLOCK_INIT
typedef CONDITION_VARIABLE sdx__cond;
typedef struct sdx__thread { HANDLE handle; sdx__thread_fn fn; void *arg; } sdx__thread;

static void sdx__mutex_init(sdx__mutex *m) { InitializeSRWLock(m); }
static void sdx__mutex_destroy(sdx__mutex *m) { (void)m; }
static void sdx__mutex_lock(sdx__mutex *m) { AcquireSRWLockExclusive(m); }
static void sdx__mutex_unlock(sdx__mutex *m) { ReleaseSRWLockExclusive(m); }
static void sdx__cond_init(sdx__cond *c) { InitializeConditionVariable(c); }
static void sdx__cond_destroy(sdx__cond *c) { (void)c; }
static void sdx__cond_wait(sdx__cond *c, sdx__mutex *m) { SleepConditionVariableSRW(c, m, INFINITE, 0); }
static void sdx__cond_signal(sdx__cond *c) { WakeConditionVariable(c); }
static void sdx__cond_broadcast(sdx__cond *c) { WakeAllConditionVariable(c); }

static DWORD WINAPI sdx__thread_entry(LPVOID arg) {
    sdx__thread *t = (sdx__thread *)arg;
    t->fn(t->arg);
    return 0;
}

/* t must stay where it is until sdx__thread_join. Returns 1 on success. */
static int sdx__thread_start(sdx__thread *t, sdx__thread_fn fn, void *arg) {
    t->fn = fn;
    t->arg = arg;
    t->handle = CreateThread(NULL, 0, sdx__thread_entry, t, 0, NULL);
    return t->handle != NULL;
}

static void sdx__thread_join(sdx__thread *t) {
    WaitForSingleObject(t->handle, INFINITE);
    CloseHandle(t->handle);
    t->handle = NULL;
}

static int sdx__cpu_count(void) {
#if _WIN32_WINNT >= 0x0601
    DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);   /* GetSystemInfo stops at 64 */
#else
    SYSTEM_INFO si;
    DWORD n;
    GetSystemInfo(&si);
    n = si.dwNumberOfProcessors;
#endif
    return n < 1 ? 1 : (n > 256 ? 256 : (int)n);
}

/* The message of a Win32 error code, without the trailing newline. */
static const char *sdx__win32_error(DWORD code, char *buf, size_t size) {
    DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0, buf,
                             (DWORD)size, NULL);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '.')) buf[--n] = 0;
    if (n == 0) snprintf(buf, size, "error %lu", (unsigned long)code);
    return buf;
}

/* UTF-8 path -> a wide string from the heap in *out. Returns SDX_OK, or
 * the error (set) for invalid UTF-8 or no memory. */
static int sdx__utf8_to_wide(sdx_ctx *ctx, const char *s, wchar_t **out) {
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
    *out = NULL;
    if (n <= 0) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: path is not valid UTF-8", s);
    *out = (wchar_t *)sdx__malloc(ctx, (size_t)n * sizeof **out);
    if (!*out) return sdx__nomem(ctx, "path", (size_t)n * sizeof **out);
    MultiByteToWideChar(CP_UTF8, 0, s, -1, *out, n);
    return SDX_OK;
}

typedef struct sdx__map { const unsigned char *base; size_t size; HANDLE mapping; } sdx__map;

/* Maps a regular file read-only (an empty file maps to base NULL, size
 * 0). On failure the error is set and the code returned. */
static int sdx__map_file(sdx_ctx *ctx, const char *path, sdx__map *m) {
    char why[256];
    wchar_t *wpath;
    HANDLE f;
    LARGE_INTEGER size;
    int rc;
    memset(m, 0, sizeof *m);
    if ((rc = sdx__utf8_to_wide(ctx, path, &wpath)) != SDX_OK) return rc;
    /* a directory does not open without FILE_FLAG_BACKUP_SEMANTICS */
    f = CreateFileW(wpath, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                    FILE_ATTRIBUTE_NORMAL, NULL);
    if (f == INVALID_HANDLE_VALUE) {
        DWORD e = GetLastError(), attr = GetFileAttributesW(wpath);
        sdx__free(ctx, wpath);
        if (attr != INVALID_FILE_ATTRIBUTES && (attr & FILE_ATTRIBUTE_DIRECTORY))
            return sdx__fail(ctx, SDX_ERR_IO, "%s: not a regular file", path);
        return sdx__fail(ctx, SDX_ERR_IO, "%s: cannot open: %s", path, sdx__win32_error(e, why, sizeof why));
    }
    sdx__free(ctx, wpath);
    if (GetFileType(f) != FILE_TYPE_DISK) { CloseHandle(f); return sdx__fail(ctx, SDX_ERR_IO, "%s: not a regular file", path); }
    if (!GetFileSizeEx(f, &size)) {
        DWORD e = GetLastError();
        CloseHandle(f);
        return sdx__fail(ctx, SDX_ERR_IO, "%s: cannot stat: %s", path, sdx__win32_error(e, why, sizeof why));
    }
    if ((unsigned long long)size.QuadPart > (unsigned long long)SIZE_MAX) {
        CloseHandle(f);
        return sdx__fail(ctx, SDX_ERR_IO, "%s: %lld bytes do not fit the address space", path, (long long)size.QuadPart);
    }
    m->size = (size_t)size.QuadPart;
    if (m->size > 0) {   /* a mapping of an empty file is an error in Win32 */
        void *view = NULL;
        m->mapping = CreateFileMappingW(f, NULL, PAGE_READONLY, 0, 0, NULL);
        if (m->mapping) view = MapViewOfFile(m->mapping, FILE_MAP_READ, 0, 0, 0);
        if (!view) {
            DWORD e = GetLastError();
            if (m->mapping) CloseHandle(m->mapping);
            CloseHandle(f);
            memset(m, 0, sizeof *m);
            return sdx__fail(ctx, SDX_ERR_IO, "%s: cannot map %lld bytes: %s", path, (long long)size.QuadPart,
                             sdx__win32_error(e, why, sizeof why));
        }
        m->base = (const unsigned char *)view;
    }
    CloseHandle(f);   /* the mapping keeps the file open */
    return SDX_OK;
}

/* Win32 has no MADV_DONTNEED for file views. VirtualUnlock on pages that
 * are not locked is documented to remove them from the working set
 * (it then fails with ERROR_NOT_LOCKED, which is expected): they stay in
 * the standby list and fault back cheaply, as on POSIX. */
static void sdx__map_release(const sdx__map *m, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    if (!m->base || b < m->base || n == 0 || n > m->size || (size_t)(b - m->base) > m->size - n) return;
    VirtualUnlock((LPVOID)(uintptr_t)b, n);
}

/* Peak working set. With PSAPI_VERSION 2 (targets from Windows 7 on)
 * psapi.h maps GetProcessMemoryInfo to K32GetProcessMemoryInfo in
 * kernel32, so nothing extra is linked; older targets report 0. */
static size_t sdx__peak_rss(void) {
#if defined(PSAPI_VERSION) && PSAPI_VERSION > 1
    PROCESS_MEMORY_COUNTERS pmc;
    memset(&pmc, 0, sizeof pmc);
    pmc.cb = sizeof pmc;
    if (GetProcessMemoryInfo(GetCurrentProcess(), &pmc, sizeof pmc)) return (size_t)pmc.PeakWorkingSetSize;
#endif
    return 0;
}

static void sdx__unmap_file(sdx__map *m) {
    if (m->base) UnmapViewOfFile(m->base);
    if (m->mapping) CloseHandle(m->mapping);
    memset(m, 0, sizeof *m);
}

typedef struct sdx__anon { unsigned char *base; size_t size, page; } sdx__anon;

/* Committed at once (Win32 counts it against the commit limit, but gives
 * physical pages only when touched), so that reading a page not yet
 * written gives zeros, as on POSIX, instead of a fault. */
static int sdx__anon_reserve(sdx_ctx *ctx, size_t size, const char *name, sdx__anon *a) {
    SYSTEM_INFO si;
    memset(a, 0, sizeof *a);
    GetSystemInfo(&si);
    a->page = si.dwPageSize ? (size_t)si.dwPageSize : 4096;
    if (size == 0) return SDX_OK;
    a->base = (unsigned char *)VirtualAlloc(NULL, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
    if (!a->base) {
        char why[256];
        return sdx__fail(ctx, SDX_ERR_NOMEM, "%s: cannot reserve %zu bytes for the file's contents: %s", name, size,
                         sdx__win32_error(GetLastError(), why, sizeof why));
    }
    a->size = size;
    return SDX_OK;
}

/* MEM_RESET: the pages' contents are no longer needed (never written to
 * the page file); they stay committed. */
static void sdx__pages_discard(void *p, size_t n) { VirtualAlloc(p, n, MEM_RESET, PAGE_READWRITE); }

static void sdx__anon_free(sdx__anon *a) {
    if (a->base) VirtualFree(a->base, 0, MEM_RELEASE);
    memset(a, 0, sizeof *a);
}

typedef struct sdx__tmpfile {
    sdx_ctx *ctx;
    const char *path;
    wchar_t *wpath, *wtmp;
    HANDLE h;
    DWORD err;          /* first failure */
} sdx__tmpfile;

/* Creates "path.tmp.<pid>.<n>" with CREATE_NEW: a fresh file, never an
 * existing name. Returns SDX_OK or the error (set). */
static int sdx__tmpfile_open(sdx_ctx *ctx, sdx__tmpfile *f, const char *path) {
    char why[256];
    size_t len;
    int rc;
    memset(f, 0, sizeof *f);
    f->ctx = ctx;
    f->path = path;
    f->h = INVALID_HANDLE_VALUE;
    if ((rc = sdx__utf8_to_wide(ctx, path, &f->wpath)) != SDX_OK) return rc;
    len = wcslen(f->wpath);
    f->wtmp = (wchar_t *)sdx__malloc(ctx, (len + 48) * sizeof *f->wtmp);
    if (!f->wtmp) { sdx__free(ctx, f->wpath); return sdx__nomem(ctx, "path", (len + 48) * sizeof *f->wtmp); }
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        DWORD e;
        _snwprintf(f->wtmp, len + 48, L"%ls.tmp.%lu.%llu", f->wpath, (unsigned long)GetCurrentProcessId(),
                   (unsigned long long)GetTickCount64() * 100u + attempt);
        f->wtmp[len + 47] = 0;
        f->h = CreateFileW(f->wtmp, GENERIC_WRITE, 0, NULL, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
        if (f->h != INVALID_HANDLE_VALUE) return SDX_OK;
        e = GetLastError();
        if (e != ERROR_FILE_EXISTS && e != ERROR_ALREADY_EXISTS) {
            sdx__free(ctx, f->wtmp);
            sdx__free(ctx, f->wpath);
            return sdx__fail(ctx, SDX_ERR_IO, "%s: cannot create: %s", path, sdx__win32_error(e, why, sizeof why));
        }
    }
    sdx__free(ctx, f->wtmp);
    sdx__free(ctx, f->wpath);
    return sdx__fail(ctx, SDX_ERR_IO, "%s: cannot create a temporary file beside it", path);
}

/* Appends n bytes; a failure is remembered and reported by commit. */
static void sdx__tmpfile_write(sdx__tmpfile *f, const void *data, size_t n) {
    const char *p = (const char *)data;
    while (!f->err && n) {
        DWORD part = n > ((size_t)1 << 30) ? (DWORD)1 << 30 : (DWORD)n, done = 0;
        if (!WriteFile(f->h, p, part, &done, NULL)) { f->err = GetLastError(); break; }
        p += done;
        n -= done;
    }
}

static void sdx__tmpfile_release(sdx__tmpfile *f) {
    sdx__free(f->ctx, f->wtmp);
    sdx__free(f->ctx, f->wpath);
    f->wtmp = f->wpath = NULL;
}

static void sdx__tmpfile_abort(sdx__tmpfile *f) {
    if (f->h != INVALID_HANDLE_VALUE) CloseHandle(f->h);
    f->h = INVALID_HANDLE_VALUE;
    if (f->wtmp) DeleteFileW(f->wtmp);
    sdx__tmpfile_release(f);
}

/* Closes the file and renames it over path; on any failure the temporary
 * file is removed and the error set. */
static int sdx__tmpfile_commit(sdx__tmpfile *f) {
    char why[256];
    if (!CloseHandle(f->h) && !f->err) f->err = GetLastError();
    f->h = INVALID_HANDLE_VALUE;
    if (!f->err && !MoveFileExW(f->wtmp, f->wpath, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
        f->err = GetLastError();
    if (f->err) {
        int rc = sdx__fail(f->ctx, SDX_ERR_IO, "%s: write failed: %s", f->path, sdx__win32_error(f->err, why, sizeof why));
        sdx__tmpfile_abort(f);
        return rc;
    }
    sdx__tmpfile_release(f);
    return SDX_OK;
}

static int sdx__path_kind(const char *path) {
    wchar_t *w;
    DWORD attr = sdx__utf8_to_wide(NULL, path, &w) == SDX_OK ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
    sdx__free(NULL, w);
    if (attr == INVALID_FILE_ATTRIBUTES) return SDX__PATH_NONE;
    if (attr & FILE_ATTRIBUTE_DIRECTORY) return SDX__PATH_DIR;
    return (attr & FILE_ATTRIBUTE_DEVICE) ? SDX__PATH_OTHER : SDX__PATH_FILE;
}

static const char *sdx__last_separator(const char *path) {
    const char *a = strrchr(path, '/'), *b = strrchr(path, '\\');
    if (!a || !b) return a ? a : b;
    return a > b ? a : b;
}

#else /* POSIX */

/* ---- POSIX ------------------------------------------------------------ */
typedef pthread_mutex_t sdx__mutex;
#define SDX__MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
typedef pthread_cond_t sdx__cond;
typedef struct sdx__thread { pthread_t handle; sdx__thread_fn fn; void *arg; } sdx__thread;

static void sdx__mutex_init(sdx__mutex *m) { pthread_mutex_init(m, NULL); }
static void sdx__mutex_destroy(sdx__mutex *m) { pthread_mutex_destroy(m); }
static void sdx__mutex_lock(sdx__mutex *m) { pthread_mutex_lock(m); }
static void sdx__mutex_unlock(sdx__mutex *m) { pthread_mutex_unlock(m); }
static void sdx__cond_init(sdx__cond *c) { pthread_cond_init(c, NULL); }
static void sdx__cond_destroy(sdx__cond *c) { pthread_cond_destroy(c); }
static void sdx__cond_wait(sdx__cond *c, sdx__mutex *m) { pthread_cond_wait(c, m); }
static void sdx__cond_signal(sdx__cond *c) { pthread_cond_signal(c); }
static void sdx__cond_broadcast(sdx__cond *c) { pthread_cond_broadcast(c); }

static void *sdx__thread_entry(void *arg) {
    sdx__thread *t = (sdx__thread *)arg;
    t->fn(t->arg);
    return NULL;
}

/* t must stay where it is until sdx__thread_join. Returns 1 on success. */
static int sdx__thread_start(sdx__thread *t, sdx__thread_fn fn, void *arg) {
    t->fn = fn;
    t->arg = arg;
    return pthread_create(&t->handle, NULL, sdx__thread_entry, t) == 0;
}

static void sdx__thread_join(sdx__thread *t) { pthread_join(t->handle, NULL); }

static int sdx__cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (n > 256 ? 256 : (int)n);
}

typedef struct sdx__map { const unsigned char *base; size_t size, page; } sdx__map;

/* Maps a regular file read-only (an empty file maps to base NULL, size
 * 0). On failure the error is set and the code returned. */
static int sdx__map_file(sdx_ctx *ctx, const char *path, sdx__map *m) {
    struct stat sb;
    int fd;
    memset(m, 0, sizeof *m);
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is then
     * rejected as not a regular file */
    fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return sdx__fail(ctx, SDX_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &sb) != 0) { close(fd); return sdx__fail(ctx, SDX_ERR_IO, "%s: cannot stat: %s", path, strerror(errno)); }
    if (!S_ISREG(sb.st_mode)) { close(fd); return sdx__fail(ctx, SDX_ERR_IO, "%s: not a regular file", path); }
    if ((unsigned long long)sb.st_size > (unsigned long long)SIZE_MAX) {
        close(fd);
        return sdx__fail(ctx, SDX_ERR_IO, "%s: %lld bytes do not fit the address space", path, (long long)sb.st_size);
    }
    m->size = (size_t)sb.st_size;
    {
        long page = sysconf(_SC_PAGESIZE);
        m->page = page > 0 ? (size_t)page : 4096;
    }
    if (m->size > 0) {
        void *p = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            m->size = 0;
            return sdx__fail(ctx, SDX_ERR_IO, "%s: cannot mmap %lld bytes: %s", path, (long long)sb.st_size, strerror(e));
        }
        m->base = (const unsigned char *)p;
    }
    close(fd);   /* the mapping keeps the file */
    return SDX_OK;
}

/* [p, p + n) widened to whole pages: a private, never written file
 * mapping gives its pages back and reads them from the file (the page
 * cache) at the next touch, so the contents seen are unchanged. Pages a
 * neighbouring tensor shares just fault back in. Best effort: a failure
 * only leaves the pages resident. */
static void sdx__map_release(const sdx__map *m, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    uintptr_t lo, hi, end;
    if (!m->base || b < m->base || n == 0 || n > m->size || (size_t)(b - m->base) > m->size - n) return;
    lo = (uintptr_t)b & ~(uintptr_t)(m->page - 1);
    hi = ((uintptr_t)b + n + m->page - 1) & ~(uintptr_t)(m->page - 1);
    end = ((uintptr_t)m->base + m->size + m->page - 1) & ~(uintptr_t)(m->page - 1);
    if (hi > end) hi = end;
    (void)madvise((void *)lo, (size_t)(hi - lo), MADV_DONTNEED);
}

/* Peak resident set (ru_maxrss: kilobytes on Linux and the BSDs, bytes
 * on macOS). */
static size_t sdx__peak_rss(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0 || ru.ru_maxrss <= 0) return 0;
#if defined(__APPLE__)
    return (size_t)ru.ru_maxrss;
#else
    return (size_t)ru.ru_maxrss * 1024u;
#endif
}

static void sdx__unmap_file(sdx__map *m) {
    if (m->base) munmap((void *)(uintptr_t)m->base, m->size);
    memset(m, 0, sizeof *m);
}

#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#endif
#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif

typedef struct sdx__anon { unsigned char *base; size_t size, page; } sdx__anon;

/* A private anonymous mapping: zero pages until written, and no swap
 * reserved for the parts never written (MAP_NORESERVE, where there is). */
static int sdx__anon_reserve(sdx_ctx *ctx, size_t size, const char *name, sdx__anon *a) {
    long page = sysconf(_SC_PAGESIZE);
    void *p;
    memset(a, 0, sizeof *a);
    a->page = page > 0 ? (size_t)page : 4096;
    if (size == 0) return SDX_OK;
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return sdx__fail(ctx, SDX_ERR_NOMEM, "%s: cannot reserve %zu bytes for the file's contents: %s", name, size, strerror(errno));
    a->base = (unsigned char *)p;
    a->size = size;
    return SDX_OK;
}

/* Zero when next read on Linux; undefined elsewhere. */
static void sdx__pages_discard(void *p, size_t n) { (void)madvise(p, n, MADV_DONTNEED); }

static void sdx__anon_free(sdx__anon *a) {
    if (a->base) munmap(a->base, a->size);
    memset(a, 0, sizeof *a);
}

typedef struct sdx__tmpfile {
    sdx_ctx *ctx;
    const char *path;
    char *tmp;
    int fd;
    int err;            /* first failure (errno) */
} sdx__tmpfile;

/* Creates "path.tmp.XXXXXX" with mkstemp: a fresh file, never an existing
 * name or a symlink. Returns SDX_OK or the error (set). */
static int sdx__tmpfile_open(sdx_ctx *ctx, sdx__tmpfile *f, const char *path) {
    size_t len = strlen(path);
    memset(f, 0, sizeof *f);
    f->ctx = ctx;
    f->path = path;
    f->tmp = (char *)sdx__malloc(ctx, len + 16);
    if (!f->tmp) return sdx__nomem(ctx, "path", len + 16);
    memcpy(f->tmp, path, len);
    memcpy(f->tmp + len, ".tmp.XXXXXX", 12);
    f->fd = mkstemp(f->tmp);
    if (f->fd < 0) {
        int rc = sdx__fail(ctx, SDX_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        sdx__free(ctx, f->tmp);
        f->tmp = NULL;
        return rc;
    }
    return SDX_OK;
}

/* Appends n bytes; a failure is remembered and reported by commit. */
static void sdx__tmpfile_write(sdx__tmpfile *f, const void *data, size_t n) {
    const char *p = (const char *)data;
    while (!f->err && n) {
        ssize_t w = write(f->fd, p, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n);
        if (w < 0) { if (errno != EINTR) f->err = errno; continue; }
        p += w;
        n -= (size_t)w;
    }
}

static void sdx__tmpfile_abort(sdx__tmpfile *f) {
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
    if (f->tmp) unlink(f->tmp);
    sdx__free(f->ctx, f->tmp);
    f->tmp = NULL;
}

/* Closes the file and renames it over path; on any failure the temporary
 * file is removed and the error set. */
static int sdx__tmpfile_commit(sdx__tmpfile *f) {
    if (fchmod(f->fd, 0644) != 0) { /* best effort: mkstemp creates 0600 */ }
    if (close(f->fd) != 0 && !f->err) f->err = errno;
    f->fd = -1;
    if (!f->err && rename(f->tmp, f->path) != 0) f->err = errno;
    if (f->err) {
        int rc = sdx__fail(f->ctx, SDX_ERR_IO, "%s: write failed: %s", f->path, strerror(f->err));
        sdx__tmpfile_abort(f);
        return rc;
    }
    sdx__free(f->ctx, f->tmp);
    f->tmp = NULL;
    return SDX_OK;
}

static int sdx__path_kind(const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0) return SDX__PATH_NONE;
    return S_ISREG(sb.st_mode) ? SDX__PATH_FILE : S_ISDIR(sb.st_mode) ? SDX__PATH_DIR : SDX__PATH_OTHER;
}

static const char *sdx__last_separator(const char *path) { return strrchr(path, '/'); }

#endif

/* The whole pages inside [p, p + n) of an anonymous range go back to the
 * OS, their contents undefined (the caller writes them again before use);
 * pages shared with bytes outside stay. */
static void sdx__anon_drop(const sdx__anon *a, const void *p, size_t n) {
    uintptr_t lo = ((uintptr_t)p + a->page - 1) & ~(uintptr_t)(a->page - 1), hi = ((uintptr_t)p + n) & ~(uintptr_t)(a->page - 1);
    if (a->base && hi > lo) sdx__pages_discard((void *)lo, (size_t)(hi - lo));
}

SDX_API size_t sdx_peak_rss(void) { return sdx__peak_rss(); }

/* ---- a counter shared between threads ---------------------------------- */
/* sdx__counter and SDX__ATOMICS are in core.c (the context holds one).
 * Sequentially consistent: a bump is seen by every later read. The lock
 * (SDX_NO_ATOMICS, or a compiler with none of these) is one for the
 * process: counters are bumped and read rarely (sdx_cancel; the checks
 * a stage makes between layers). */
#if SDX__ATOMICS == 1
#include <stdatomic.h>
static unsigned sdx__counter_add1(sdx__counter *c) { return atomic_fetch_add(c, 1u) + 1u; }
static unsigned sdx__counter_read(sdx__counter *c) { return atomic_load(c); }
#elif SDX__ATOMICS == 2
static unsigned sdx__counter_add1(sdx__counter *c) { return __atomic_add_fetch(c, 1u, __ATOMIC_SEQ_CST); }
static unsigned sdx__counter_read(sdx__counter *c) { return __atomic_load_n(c, __ATOMIC_SEQ_CST); }
#elif SDX__ATOMICS == 3
static unsigned sdx__counter_add1(sdx__counter *c) { return (unsigned)InterlockedIncrement(c); }
static unsigned sdx__counter_read(sdx__counter *c) { return (unsigned)InterlockedCompareExchange(c, 0, 0); }
#else
static sdx__mutex sdx__counter_lock = SDX__MUTEX_INIT;
static unsigned sdx__counter_add1(sdx__counter *c) {
    unsigned v;
    sdx__mutex_lock(&sdx__counter_lock);
    v = ++*c;
    sdx__mutex_unlock(&sdx__counter_lock);
    return v;
}
static unsigned sdx__counter_read(sdx__counter *c) {
    unsigned v;
    sdx__mutex_lock(&sdx__counter_lock);
    v = *c;
    sdx__mutex_unlock(&sdx__counter_lock);
    return v;
}
#endif
