#include "objectstore/objectstore.h"
