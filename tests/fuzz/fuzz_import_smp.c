/* fuzz_import_smp.c — the smp importer (pipeline/import.h); see fuzz_import.h. */
#define FUZZ_FORMAT GYRO_IMPORT_SMP
#include "tests/fuzz/fuzz_import.h"
