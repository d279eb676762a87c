/* Name validation: being written. */
#include "core/sl.h"
