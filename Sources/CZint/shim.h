#ifndef PASSFORGE_CZINT_SHIM_H
#define PASSFORGE_CZINT_SHIM_H
#include <zint.h>
#endif
