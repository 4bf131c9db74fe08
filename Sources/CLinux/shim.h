// Linux and glibc headers that Swift's Glibc module does not export: the allocator's controls
// (malloc_trim, for Store/HeapRelease.swift; mallopt, for the fleet benchmark), epoll (for Server/PollLoop.swift), and glibc's
// close-everything spawn action (for the test fixtures' servers, PostgresFixture), and
// pseudo-terminals (below).
#include <malloc.h>
#include <spawn.h>
#include <sys/epoll.h>

// Declared by <spawn.h> only under _GNU_SOURCE (glibc 2.34 and later).
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

// Pseudo-terminals, declared by <stdlib.h> only under _XOPEN_SOURCE (for the browser's benchmark,
// which runs `settingsd browse` in one).
extern int posix_openpt(int flags);
extern int grantpt(int fd);
extern int unlockpt(int fd);
extern char *ptsname(int fd);
