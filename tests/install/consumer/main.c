/* Links against an installed libtilefoundry and checks the ABI version. */
#include <stdio.h>
#include <tilefoundry/tilefoundry.h>

int main(void) {
  if (tf_abi_version() != TF_ABI_VERSION) {
    fprintf(stderr, "abi mismatch: %u vs %u\n", tf_abi_version(), (unsigned)TF_ABI_VERSION);
    return 1;
  }
  printf("consumer: TileFoundry ABI %u.%u\n", tf_abi_version() >> 16, tf_abi_version() & 0xffff);
  return 0;
}
