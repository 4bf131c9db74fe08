// Linux and glibc headers that Swift's Glibc module does not export: the allocator's controls
// (malloc_trim, for Store/HeapRelease.swift) and epoll (for Server/PollLoop.swift).
#include <malloc.h>
#include <sys/epoll.h>
