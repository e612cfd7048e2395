// The run-time version; its shape never changes (docs/c-abi.md, ABI stability).
#include "tilefoundry/tilefoundry.h"

extern "C" uint32_t tf_abi_version(void) { return TF_ABI_VERSION; }
