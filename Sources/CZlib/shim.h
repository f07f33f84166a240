#ifndef PASSFORGE_CZLIB_SHIM_H
#define PASSFORGE_CZLIB_SHIM_H
#include <zlib.h>
#endif
