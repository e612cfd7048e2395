// The run-time version; its shape never changes (STYLE pattern 4).
#include "tilefoundry/tilefoundry.h"

extern "C" uint32_t tf_abi_version(void) { return TF_ABI_VERSION; }
