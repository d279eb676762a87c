#include "core/sl.h"
