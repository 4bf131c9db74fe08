// A preload for the clock-step tests: shifts the wall clock (CLOCK_REALTIME, gettimeofday, time)
// of the process it is loaded into by the signed number of milliseconds held in the file named
// by SETTINGSD_CLOCK_SHIFT_FILE (8 bytes, native order), read anew at every call, so a test moves
// a running daemon's wall clock back and forth. The monotonic clock is left alone.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile const int64_t *shift_ms;

__attribute__((constructor)) static void map_shift(void) {
    const char *path = getenv("SETTINGSD_CLOCK_SHIFT_FILE");
    if (path == NULL) return;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    void *mapped = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (mapped != MAP_FAILED) shift_ms = mapped;
}

static void shift(struct timespec *time) {
    if (shift_ms == NULL) return;
    int64_t nanoseconds = (int64_t)time->tv_sec * 1000000000 + time->tv_nsec + *shift_ms * 1000000;
    time->tv_sec = nanoseconds / 1000000000;
    time->tv_nsec = nanoseconds % 1000000000;
}

int clock_gettime(clockid_t clock, struct timespec *time) {
    static int (*real)(clockid_t, struct timespec *);
    if (real == NULL) *(void **)&real = dlsym(RTLD_NEXT, "clock_gettime");
    int result = real(clock, time);
    if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) shift(time);
    return result;
}

int gettimeofday(struct timeval *value, void *zone) {
    struct timespec time;
    clock_gettime(CLOCK_REALTIME, &time);
    if (value != NULL) {
        value->tv_sec = time.tv_sec;
        value->tv_usec = time.tv_nsec / 1000;
    }
    (void)zone;
    return 0;
}

time_t time(time_t *out) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (out != NULL) *out = now.tv_sec;
    return now.tv_sec;
}
