/* fuzz_import_nlpcc.c — the nlpcc importer (pipeline/import.h); see fuzz_import.h. */
#define FUZZ_FORMAT GYRO_IMPORT_NLPCC
#include "tests/fuzz/fuzz_import.h"
