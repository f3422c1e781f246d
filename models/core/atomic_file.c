/* atomic_file.c — temporary file + fsync + rename (see atomic_file.h). */
#include "models/core/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_uint tmp_counter;

gyro_status gyro_atomic_open(gyro_atomic_file *out, const char *path)
{
    gyro_atomic_file f = {0};
    if (strcmp(path, "-") == 0) {
        f.fp = stdout;
        f.path = strdup("-");
        if (!f.path) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        *out = f;
        return GYRO_OK;
    }
    size_t n = strlen(path) + 64;
    f.path = strdup(path);
    f.tmp_path = malloc(n);
    if (!f.path || !f.tmp_path) {
        free(f.path);
        free(f.tmp_path);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    snprintf(f.tmp_path, n, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&tmp_counter, 1));
    int fd = open(f.tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 || !(f.fp = fdopen(fd, "wb"))) {
        int e = errno;
        if (fd >= 0) close(fd);
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

gyro_status gyro_atomic_commit(gyro_atomic_file *f)
{
    gyro_status s = GYRO_OK;
    if (!f->tmp_path) {
        if (fflush(f->fp) != 0)
            s = gyro_error_set(GYRO_ERR_IO, "cannot write to standard output: %s", strerror(errno));
        free(f->path);
        memset(f, 0, sizeof *f);
        return s;
    }
    int bad = ferror(f->fp) || fflush(f->fp) != 0 || fsync(fileno(f->fp)) != 0;
    int e = errno;
    if (fclose(f->fp) != 0 && !bad) { bad = 1; e = errno; }
    if (!bad && rename(f->tmp_path, f->path) != 0) { bad = 1; e = errno; }
    if (bad) {
        s = gyro_error_set(GYRO_ERR_IO, "cannot write %s: %s", f->path, strerror(e));
        unlink(f->tmp_path);
    } else {
        fsync_parent(f->path);
    }
    free(f->path);
    free(f->tmp_path);
    memset(f, 0, sizeof *f);
    return s;
}

void gyro_atomic_abort(gyro_atomic_file *f)
{
    if (f->tmp_path) {
        fclose(f->fp);
        unlink(f->tmp_path);
    }
    free(f->path);
    free(f->tmp_path);
    memset(f, 0, sizeof *f);
}
