// The extension module's copy of support/allocation.cpp, built without mimalloc. A Python process
// already has its allocator, and libstdc++ (loaded by numpy or JAX before this module) allocates
// with it: the module must pair every new and delete with libstdc++'s, so it links neither
// mimalloc nor the library's own allocation.o (whose operator new calls mi_malloc); see the
// module's block in CMakeLists.txt.
#undef GSPMD_HAVE_MIMALLOC
#include "support/allocation.cpp"  // NOLINT(bugprone-suspicious-include): the same code, another build of it
