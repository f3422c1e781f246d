/* atomic_file.c — temporary file + fsync + rename (see atomic_file.h).
 *
 * Pending temporary paths live in a fixed table of static buffers: registering takes a mutex
 * (never held in a signal handler); a slot's `used` flag is set only after its path is fully
 * written and cleared before the file is renamed or unlinked, so a handler reading the table
 * unlinks only complete paths. A slot is cleared after the rename, so a handler racing a commit
 * may unlink a path that was just renamed away: unlink then fails with ENOENT, harmlessly. (A
 * new temporary file cannot take that name: the counter in it never repeats.)
 */
#include "models/core/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static atomic_uint tmp_counter;

/* ---- the table of pending temporary paths ---------------------------------------------------- */
#define PENDING_SLOTS 16
#define PENDING_PATH 4096
static char pending_path[PENDING_SLOTS][PENDING_PATH];
static volatile sig_atomic_t pending_used[PENDING_SLOTS];
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

static int pending_add(const char *tmp)
{
    if (strlen(tmp) >= PENDING_PATH) return -1;   /* not tracked; still works, just not cleaned */
    int slot = -1;
    pthread_mutex_lock(&pending_lock);
    for (int i = 0; i < PENDING_SLOTS; i++)
        if (!pending_used[i]) {
            memcpy(pending_path[i], tmp, strlen(tmp) + 1);
            atomic_signal_fence(memory_order_seq_cst);
            pending_used[i] = 1;
            slot = i;
            break;
        }
    pthread_mutex_unlock(&pending_lock);
    return slot;
}

static void pending_drop(int slot)
{
    if (slot < 0) return;
    pthread_mutex_lock(&pending_lock);
    pending_used[slot] = 0;
    pthread_mutex_unlock(&pending_lock);
}

void gyro_atomic_remove_pending(void)
{
    for (int i = 0; i < PENDING_SLOTS; i++)
        if (pending_used[i]) (void)unlink(pending_path[i]);
}

static void cleanup_signal(int sig)
{
    int e = errno;
    gyro_atomic_remove_pending();
    signal(sig, SIG_DFL);
    raise(sig);
    errno = e;
}

static void cleanup_at_exit(void) { gyro_atomic_remove_pending(); }

gyro_status gyro_atomic_cleanup_on_signals(void)
{
    static int installed;
    if (installed) return GYRO_OK;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cleanup_signal;
    sigemptyset(&sa.sa_mask);
    int sigs[2] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) != 0)
            return gyro_error_set(GYRO_ERR_IO, "cannot read a signal action: %s", strerror(errno));
        if (old.sa_handler == SIG_IGN) continue;   /* ignored on entry (nohup, `cmd &`): keep so */
        if (sigaction(sigs[i], &sa, NULL) != 0)
            return gyro_error_set(GYRO_ERR_IO, "cannot install signal handlers: %s", strerror(errno));
    }
    atexit(cleanup_at_exit);
    installed = 1;
    return GYRO_OK;
}

/* ---- open, commit, abort --------------------------------------------------------------------- */

/* 1 if `path` must be written in place: it exists and is not a regular file, or it is a symbolic
 * link under /dev/ (/dev/stdout, /dev/fd/N) or any path under /proc/, so that /dev/stdout
 * redirected to a file is written through, not replaced. */
static int write_in_place(const char *path)
{
    if (strncmp(path, "/proc/", 6) == 0) return 1;
    struct stat st;
    if (strncmp(path, "/dev/", 5) == 0 && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) return 1;
    if (stat(path, &st) != 0) return 0;   /* absent (or a dangling link): created by rename */
    return !S_ISREG(st.st_mode);
}

gyro_status gyro_atomic_open(gyro_atomic_file *out, const char *path)
{
    gyro_atomic_file f = {0};
    f.slot = -1;
    if (strcmp(path, "-") == 0) {
        f.fp = stdout;
        f.mode = GYRO_ATOMIC_STDOUT;
        f.path = strdup("-");
        if (!f.path) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        *out = f;
        return GYRO_OK;
    }
    if (write_in_place(path)) {
        struct stat st;
        int flags = O_WRONLY | O_CLOEXEC;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) flags |= O_TRUNC;
        else if (stat(path, &st) != 0) flags |= O_CREAT | O_TRUNC;
        f.mode = GYRO_ATOMIC_IN_PLACE;
        if (!(f.path = strdup(path))) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        int fd = open(path, flags, 0644);
        if (fd < 0 || !(f.fp = fdopen(fd, "wb"))) {
            int e = errno;
            if (fd >= 0) close(fd);
            free(f.path);
            return gyro_error_set(GYRO_ERR_IO, "cannot open %s: %s", path, strerror(e));
        }
        *out = f;
        return GYRO_OK;
    }
    /* a symbolic link to a regular file: replace the target, keep the link */
    char *real = NULL;
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) real = realpath(path, NULL);
    f.path = strdup(real ? real : path);
    free(real);
    size_t n = f.path ? strlen(f.path) + 64 : 0;
    f.tmp_path = f.path ? malloc(n) : NULL;
    if (!f.path || !f.tmp_path) {
        free(f.path);
        free(f.tmp_path);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    snprintf(f.tmp_path, n, "%s.tmp.%ld.%u", f.path, (long)getpid(), atomic_fetch_add(&tmp_counter, 1));
    f.slot = pending_add(f.tmp_path);
    int fd = open(f.tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 || !(f.fp = fdopen(fd, "wb"))) {
        int e = errno;
        if (fd >= 0) { close(fd); unlink(f.tmp_path); }
        pending_drop(f.slot);
        gyro_status s = gyro_error_set(GYRO_ERR_IO, "cannot create %s: %s", f.tmp_path, strerror(e));
        free(f.path);
        free(f.tmp_path);
        return s;
    }
    *out = f;
    return GYRO_OK;
}

static void fsync_parent(const char *path)
{
    char *dir = strdup(path);
    if (!dir) return;
    char *slash = strrchr(dir, '/');
    const char *d = ".";
    if (slash == dir) d = "/";
    else if (slash) { *slash = '\0'; d = dir; }
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) { (void)fsync(fd); close(fd); }
    free(dir);
}

static void release(gyro_atomic_file *f)
{
    free(f->path);
    free(f->tmp_path);
    memset(f, 0, sizeof *f);
    f->slot = -1;
}

gyro_status gyro_atomic_commit(gyro_atomic_file *f)
{
    gyro_status s = GYRO_OK;
    if (f->mode == GYRO_ATOMIC_STDOUT) {
        if (fflush(f->fp) != 0)
            s = gyro_error_set(GYRO_ERR_IO, "cannot write to standard output: %s", strerror(errno));
        release(f);
        return s;
    }
    if (f->mode == GYRO_ATOMIC_IN_PLACE) {
        int bad = ferror(f->fp) || fflush(f->fp) != 0;
        int e = errno;
        /* devices, pipes and sockets may not support fsync: only a real failure counts */
        if (!bad && fsync(fileno(f->fp)) != 0 && errno != EINVAL && errno != EROFS &&
            errno != ENOTSUP) { bad = 1; e = errno; }
        if (fclose(f->fp) != 0 && !bad) { bad = 1; e = errno; }
        if (bad) s = gyro_error_set(GYRO_ERR_IO, "cannot write %s: %s", f->path, strerror(e));
        release(f);
        return s;
    }
    int bad = ferror(f->fp) || fflush(f->fp) != 0 || fsync(fileno(f->fp)) != 0;
    int e = errno;
    if (fclose(f->fp) != 0 && !bad) { bad = 1; e = errno; }
    /* the slot is dropped only after the rename: a signal in between unlinks a path that no
     * longer exists (ENOENT, harmless) rather than leaving the temporary file behind */
    if (!bad && rename(f->tmp_path, f->path) != 0) { bad = 1; e = errno; }
    if (bad) {
        s = gyro_error_set(GYRO_ERR_IO, "cannot write %s: %s", f->path, strerror(e));
        unlink(f->tmp_path);
    } else {
        fsync_parent(f->path);
    }
    pending_drop(f->slot);
    release(f);
    return s;
}

int gyro_atomic_remove_file(const char *path)
{
    struct stat st;
    if (!path || lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    return unlink(path) == 0;
}

void gyro_atomic_abort(gyro_atomic_file *f)
{
    if (f->mode == GYRO_ATOMIC_IN_PLACE) {
        fclose(f->fp);
    } else if (f->mode == GYRO_ATOMIC_RENAME && f->tmp_path) {
        fclose(f->fp);
        unlink(f->tmp_path);
        pending_drop(f->slot);
    }
    release(f);
}
