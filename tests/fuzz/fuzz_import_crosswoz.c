/* fuzz_import_crosswoz.c — the crosswoz importer (pipeline/import.h); see fuzz_import.h. */
#define FUZZ_FORMAT GYRO_IMPORT_CROSSWOZ
#include "tests/fuzz/fuzz_import.h"
