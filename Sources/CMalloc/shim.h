// glibc's allocator controls, which the Glibc module does not export (malloc_trim).
#include <malloc.h>
