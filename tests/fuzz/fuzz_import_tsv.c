/* fuzz_import_tsv.c — the tsv importer (pipeline/import.h); see fuzz_import.h. */
#define FUZZ_FORMAT GYRO_IMPORT_TSV
#include "tests/fuzz/fuzz_import.h"
