#include <stdio.h>

#include "stall/base.h"

int main(void)
{
    printf("stallsim %s\n", stall_version());
    return 0;
}
