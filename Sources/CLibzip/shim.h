#ifndef PASSFORGE_CLIBZIP_SHIM_H
#define PASSFORGE_CLIBZIP_SHIM_H
#include <zip.h>
#if defined(__linux__)
/* mallopt, for ProcessTuning.reduceHeapTrimming (see Zip/ProcessTuning.swift). */
#include <malloc.h>
#endif
#endif
