#include "core/sl.h"
int
main(void)
{
    return 0;
}
