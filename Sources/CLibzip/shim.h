#ifndef PASSFORGE_CLIBZIP_SHIM_H
#define PASSFORGE_CLIBZIP_SHIM_H
#include <zip.h>
#endif
