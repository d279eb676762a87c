/* Bulk codec: being written (see docs/bulk-format.md). */
#include "core/sl.h"
