// Linux and glibc headers that Swift's Glibc module does not export: the allocator's controls
// (malloc_trim, for Store/HeapRelease.swift; mallopt, for the fleet benchmark), epoll (for Server/PollLoop.swift), and glibc's
// close-everything spawn action (for the test fixtures' servers, PostgresFixture).
#include <malloc.h>
#include <spawn.h>
#include <sys/epoll.h>

// Declared by <spawn.h> only under _GNU_SOURCE (glibc 2.34 and later).
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
