#ifndef PASSFORGE_CLIBXML2_SHIM_H
#define PASSFORGE_CLIBXML2_SHIM_H
/* libxml2's HTML parser, used only by the HTMLFragments wrapper (pkg-config libxml-2.0 adds -I/usr/include/libxml2). */
#include <libxml/xmlversion.h>
/* Debian builds libxml2 with ICU, so encoding.h would include the system's <unicode/ucnv.h>, whose UErrorCode
 * clashes with Foundation's own ICU (_FoundationICU) in every module that sees both. passforge never touches
 * an encoding handler (only pointers to one pass through), so the ICU part of that header is left out. */
#undef LIBXML_ICU_ENABLED
#include <libxml/HTMLparser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#endif
