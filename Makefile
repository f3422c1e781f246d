# gyro — plain Makefile. Every dependency is found with pkg-config.
#
#   make deps       install the Debian packages that are missing (apt-get)
#   make            build build/gyro, build/libgyro.a, build/libgyro.so
#   make run        deps + build + the main job on the embedded default corpus
#   make check      deps + build + the whole test suite (Check suites, end-to-end tests, fuzz targets)
#   make sanitize   the whole suite built by clang with ASan, UBSan and pointer-overflow (build-san/)
#   make fuzz       libFuzzer targets of tests/fuzz/ (clang, ASan+UBSan, in build-fuzz/), each run
#                   FUZZ_SECONDS (default 60); `make check` runs each for CHECK_FUZZ_SECONDS (3)
#   make test       build + run the suite without touching packages; BUILD=dir ONLY="suites" narrow it
#   make install    PREFIX=/usr/local DESTDIR= (LIBDIR= the multiarch dir): binary, libraries,
#                   the public headers (<gyro/gyro.h>), gyro.pc, man page, share/gyro/*.proto, and
#                   the Python package (install-python; PYTHON= skips it)
#   make clean
#   MPI=0           build without MPI even when Open MPI is installed (default: use it when
#                   `pkg-config ompi-c` finds it; switching needs `make clean`)
#
# Sources are picked up by wildcard: every .c under models/, embeddings/ and pipeline/ goes into
# libgyro, except pipeline/cli/ which makes the gyro binary. Each tests/check_<module>.c is one
# Check suite and becomes build/tests/check_<module>. Each tests/e2e/*.sh is an end-to-end test.

VERSION    := 0.1.0
BUILD      ?= build
PREFIX     ?= /usr/local
DESTDIR    ?=
SHELL      := /bin/bash

PKGS       := icu-uc icu-i18n libutf8proc openblas libprotobuf-c grpc zlib
# Open MPI is optional: with it, `mpirun -np N gyro char2vec train|classify train ...` trains
# over N processes (pipeline/mpi_comm.h); without it gyro is the same single-process program.
MPI        ?= auto
MPI_PKG    := $(if $(filter 0 no off,$(MPI)),,$(shell pkg-config --exists ompi-c 2>/dev/null && echo ompi-c))
PKGS       += $(MPI_PKG)
DEB_PKGS   := build-essential pkg-config libicu-dev libutf8proc-dev libopenblas-dev \
              protobuf-c-compiler libprotobuf-c-dev libgrpc-dev check fortunes-zh \
              python3-protobuf python3-grpcio python3-grpc-tools python3-pkg-resources \
              python3-pip python3-venv python3-setuptools python3-wheel nghttp2-client openssl \
              clang libclang-rt-14-dev \
              fonts-wqy-microhei librsvg2-bin iproute2 \
              haproxy openmpi-bin libopenmpi-dev

CC         ?= cc
# Portable by default: on x86-64 the x86-64-v3 level (AVX2 + FMA, every x86 CPU since 2013-15),
# which the shared vector loops (models/hyp/hyp_vec_impl.h) and the small-product kernel of
# models/core/blas.c need; the inference kernels (models/layers/kernels_pack.c) pick AVX-512 or
# AVX2 at run time whatever this says. ARCH_FLAGS=-march=native tunes for the build machine,
# ARCH_FLAGS= builds for any x86-64 (the vector loops then run their scalar fallbacks).
ARCH_FLAGS ?= $(if $(filter x86_64 amd64,$(shell uname -m)),-march=x86-64-v3,)
OPT        ?= -O2
CFLAGS_BASE = -std=c11 -Wall -Wextra $(OPT) $(ARCH_FLAGS) -g -fPIC -pthread \
              -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
SAN_FLAGS  ?=
# Each pkg-config answer is computed once, when first used (grpc's takes ~0.4 s of CPU; asked
# again for every compile line it cost a whole build ~40 s).
PKG_CFLAGS  = $(eval PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null))$(PKG_CFLAGS)
PKG_LIBS    = $(eval PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null))$(PKG_LIBS)
CHECK_LIBS  = $(eval CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null))$(CHECK_LIBS)
INCLUDES    = -I. -I$(BUILD)/gen
# CPPFLAGS, CFLAGS and LDFLAGS are the user's (environment or command line, e.g. Debian's
# `dpkg-buildflags --export=make`): they come after gyro's own flags, so they win, and gyro's
# never replace them (ALL_CFLAGS is what the compile rules use).
ALL_CFLAGS  = $(CFLAGS_BASE) $(SAN_FLAGS) $(INCLUDES) $(PKG_CFLAGS) $(CPPFLAGS) $(CFLAGS)
LDLIBS      = $(PKG_LIBS) -lm -lpthread

PROTOS     := proto/gyro.proto proto/health.proto proto/reflection.proto proto/reflection_v1.proto
GEN_C      := $(patsubst proto/%.proto,$(BUILD)/gen/proto/%.pb-c.c,$(PROTOS))
GEN_H      := $(GEN_C:.c=.h)
# The FileDescriptorSet of PROTOS (imports included), compiled into libgyro as a C array for
# gRPC server reflection (pipeline/reflection.h).
DESC_SET   := $(BUILD)/gen/proto/descriptors/gyro.desc
DESC_C     := $(BUILD)/gen/proto/descriptor_set.c
# Every file of corpora/music/ is compiled into libgyro (corpora/embed-data.sh -> a C array), so an
# installed gyro generates the music set; the directories are prerequisites so that adding or
# removing a file regenerates the array too.
EMBED_DIRS := $(sort $(shell find corpora/music -type d 2>/dev/null))
EMBED_DATA := $(sort $(shell find corpora/music -type f -not -path '*/.*' -not -name '*~' 2>/dev/null))
EMBED_C    := $(BUILD)/gen/corpora/music_data.c

LIB_SRC    := $(sort $(shell find models embeddings pipeline -name '*.c' -not -path 'pipeline/cli/*' 2>/dev/null))
CLI_SRC    := $(sort $(wildcard pipeline/cli/*.c))
LIB_OBJ    := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(GEN_C:.c=.o) $(EMBED_C:.c=.o) $(DESC_C:.c=.o)
CLI_OBJ    := $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_SRC))
TEST_SRC   := $(sort $(wildcard tests/check_*.c))
TEST_BIN   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
TEST_HELP  := $(sort $(wildcard tests/support/*.c))
TEST_HOBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(TEST_HELP))
E2E        := $(sort $(wildcard tests/e2e/*.sh))
# ONLY="check_core normalize" restricts `make test` to those suites (names without dir or .sh).
ONLY       ?=
RUN_BIN    := $(if $(ONLY),$(foreach o,$(ONLY),$(filter %/$(o),$(TEST_BIN))),$(TEST_BIN))
RUN_E2E    := $(if $(ONLY),$(foreach o,$(ONLY),$(filter %/$(o).sh,$(E2E))),$(E2E))
SANBUILD   ?= build-san
HEADERS    := $(sort $(shell find models embeddings pipeline -name '*.h' -not -path 'pipeline/cli/*' 2>/dev/null))

FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
CHECK_FUZZ_SECONDS ?= 3
FUZZ_SRC     := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN     := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
FUZZ_SEEDS   := $(sort $(wildcard tests/fuzz/corpus/*/*))

.PHONY: all deps run check test sanitize install install-python clean bench bench-speed fuzz fuzz-run FORCE
.DEFAULT_GOAL := all
.SECONDARY:

all: $(BUILD)/gyro $(BUILD)/libgyro.a $(BUILD)/libgyro.so $(BUILD)/gyro.pc

# ---- set-up -----------------------------------------------------------------------------------
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "gyro: installing Debian packages:$$missing"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	else echo "gyro: all Debian packages present"; fi

# ---- code generation --------------------------------------------------------------------------
$(BUILD)/gen/proto/%.pb-c.c $(BUILD)/gen/proto/%.pb-c.h: proto/%.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen $<

$(DESC_SET): $(PROTOS)
	@mkdir -p $(dir $@)
	protoc-c -Iproto --include_imports --descriptor_set_out=$@ $(PROTOS)

$(DESC_C): corpora/embed-data.sh $(DESC_SET)
	sh corpora/embed-data.sh gyro_descriptor_set $(dir $(DESC_SET)) $(DESC_SET) > $@.tmp && mv $@.tmp $@

$(DESC_C:.c=.o): $(DESC_C) pipeline/embedded.h
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(EMBED_C): corpora/embed-data.sh $(EMBED_DATA) $(EMBED_DIRS)
	@mkdir -p $(dir $@)
	sh corpora/embed-data.sh gyro_music corpora/music $(EMBED_DATA) > $@.tmp && mv $@.tmp $@

# ---- compilation ------------------------------------------------------------------------------
$(BUILD)/obj/%.o: %.c | $(GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# Only the MPI transport sees <mpi.h> (pipeline/mpi_comm.h); everything else is the same with or
# without MPI.
$(BUILD)/obj/pipeline/mpi_comm.o: ALL_CFLAGS += $(if $(MPI_PKG),-DGYRO_HAVE_MPI)

$(BUILD)/gen/proto/%.pb-c.o: $(BUILD)/gen/proto/%.pb-c.c
	$(CC) $(ALL_CFLAGS) -w -c $< -o $@

$(BUILD)/gen/corpora/%.o: $(BUILD)/gen/corpora/%.c pipeline/embedded.h
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/libgyro.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# Only gyro_* (and gyro__*, the protobuf-c code of gyro.proto) leave the shared library:
# pipeline/libgyro.map says why, and what else.
$(BUILD)/libgyro.so: $(LIB_OBJ) pipeline/libgyro.map
	$(CC) -shared -Wl,-soname,libgyro.so.0 -Wl,--version-script=pipeline/libgyro.map $(SAN_FLAGS) \
	  $(LDFLAGS) -o $@ $(LIB_OBJ) $(LDLIBS)

$(BUILD)/gyro: $(CLI_OBJ) $(BUILD)/libgyro.a
	$(CC) $(SAN_FLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libgyro.a $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_HOBJ) $(BUILD)/libgyro.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) $(LDFLAGS) -o $@ $< $(TEST_HOBJ) $(BUILD)/libgyro.a $(CHECK_LIBS) $(LDLIBS)

# gyro.pc is written on every make (so `make install PREFIX=/usr` never installs a file made for
# another prefix), and replaced only when its text changes.
$(BUILD)/gyro.pc: pipeline/gyro.pc.in FORCE
	@mkdir -p $(BUILD)
	@sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_rel,$(LIBDIR))|' \
	  -e 's|@INCLUDEDIR@|$(call pc_rel,$(INCLUDEDIR))|' -e 's|@DATADIR@|$(call pc_rel,$(DATADIR))|' \
	  -e 's|@VERSION@|$(VERSION)|' -e 's|@MPI_PKG@|$(if $(MPI_PKG), $(MPI_PKG))|' pipeline/gyro.pc.in > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; echo "gyro.pc: prefix $(PREFIX), libdir $(LIBDIR)"; fi

FORCE:

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# ---- the main job and the tests ---------------------------------------------------------------
run: deps
	@$(MAKE) --no-print-directory all
	@./corpora/run-default.sh $(BUILD)/gyro

test: $(BUILD)/gyro $(RUN_BIN)
	@GYRO_BUILD=$(BUILD) ./tests/run-all.sh $(RUN_BIN) -- $(RUN_E2E)

# The fuzz smoke runs first so that the suite's summary line ("== N passed, M failed") ends the
# output.
check: deps
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS)
	@$(MAKE) --no-print-directory test

# clang, because its UBSan reports pointer arithmetic on NULL ("applying zero offset to null
# pointer"), which gcc's does not check. A build directory made by another compiler is wiped
# first (objects of gcc's libasan and clang's runtime do not link together).
# -ffp-contract=off: clang fuses a*b+c into FMA by default, gcc does not under -std=c11; the
# tests that compare floating-point results bit for bit expect gcc's rounding.
SAN_CC     ?= clang
SAN_OPTS   ?= -fsanitize=address,undefined,pointer-overflow -fno-sanitize-recover=undefined,pointer-overflow \
              -fno-omit-frame-pointer -ffp-contract=off
sanitize: deps
	@if [ "$$(cat $(SANBUILD)/.compiler 2>/dev/null)" != "$(SAN_CC) $(SAN_OPTS)" ]; then \
	  rm -rf $(SANBUILD); mkdir -p $(SANBUILD); echo "$(SAN_CC) $(SAN_OPTS)" > $(SANBUILD)/.compiler; fi
	@$(MAKE) --no-print-directory test BUILD=$(SANBUILD) OPT=-O1 CC=$(SAN_CC) SAN_FLAGS='$(SAN_OPTS)'

# libFuzzer targets: the library instrumented for coverage (fuzzer-no-link) with ASan and UBSan,
# built by clang into $(FUZZ_BUILD); seeds from tests/fuzz/seeds.sh, then each target runs.
# As for sanitize, a build directory made with other flags is wiped first.
FUZZ_OPTS  ?= -fsanitize=address,undefined,pointer-overflow -fno-sanitize-recover=undefined,pointer-overflow \
              -fno-omit-frame-pointer -ffp-contract=off
fuzz:
	@if [ "$$(cat $(FUZZ_BUILD)/.compiler 2>/dev/null)" != "clang $(FUZZ_OPTS)" ]; then \
	  rm -rf $(FUZZ_BUILD); mkdir -p $(FUZZ_BUILD); echo "clang $(FUZZ_OPTS)" > $(FUZZ_BUILD)/.compiler; fi
	@$(MAKE) --no-print-directory fuzz-run BUILD=$(FUZZ_BUILD) CC=clang OPT=-O1 \
	  SAN_FLAGS='-fsanitize=fuzzer-no-link $(FUZZ_OPTS)'

fuzz-run: $(FUZZ_BIN) $(BUILD)/fuzz/seeds/.done
	@./tests/fuzz/run.sh $(BUILD) $(FUZZ_SECONDS) $(FUZZ_BIN)

$(BUILD)/fuzz/seeds/.done: tests/fuzz/seeds.sh $(FUZZ_SEEDS) $(BUILD)/gyro
	ASAN_OPTIONS=detect_leaks=0 ./tests/fuzz/seeds.sh $(BUILD)/gyro $(BUILD)/fuzz/seeds
	@touch $@

$(BUILD)/obj/tests/fuzz/%.o: ALL_CFLAGS += -D_GNU_SOURCE

$(BUILD)/fuzz/%: $(BUILD)/obj/tests/fuzz/%.o $(BUILD)/libgyro.a
	@mkdir -p $(dir $@)
	$(CC) -fsanitize=fuzzer $(FUZZ_OPTS) $(LDFLAGS) -o $@ $< $(BUILD)/libgyro.a $(LDLIBS)

# BENCH="name ..." runs only those scripts of tests/bench/ (see tests/bench/run-all.sh).
bench: all
	@BENCH="$(BENCH)" ./tests/bench/run-all.sh $(BUILD)/gyro

# The speed table: gRPC load, predict latency, training steps against PyTorch, data-parallel
# training, char2vec against word2vec.c — one run, one closing table.
SPEED_BENCH = grpc_load classify_latency classify_speed classify_train_threads char2vec_speed
bench-speed: all
	@BENCH="$(SPEED_BENCH)" C2V_THREADS=1 ./tests/bench/run-all.sh $(BUILD)/gyro

# ---- installation -----------------------------------------------------------------------------
# Debian's layout: libraries in the multiarch directory (dpkg-architecture's DEB_HOST_MULTIARCH,
# else the compiler's -print-multiarch, else plain lib/), so `make install PREFIX=/usr` puts
# libgyro.so.0 in /usr/lib/x86_64-linux-gnu like a Debian package and PREFIX=/usr/local in
# /usr/local/lib/x86_64-linux-gnu (both on ld.so's and pkg-config's default paths); LIBDIR,
# INCLUDEDIR, BINDIR, DATADIR and MANDIR override. Headers: only the public API, the headers
# pipeline/gyro.h includes (installed as <gyro/gyro.h> with them under include/gyro/, their
# includes rewritten to <gyro/...>, so `-I$${includedir}` is the only flag a user needs);
# include/gyro/ is replaced as a whole, so an upgrade leaves no header of an older install.
# (MULTIARCH is computed once, when first used)
MULTIARCH   = $(eval MULTIARCH := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null \
              || $(CC) -print-multiarch 2>/dev/null))$(MULTIARCH)
LIBDIR     ?= $(PREFIX)/lib$(if $(MULTIARCH),/$(MULTIARCH))
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
PUBLIC_H    = $(shell sed -n 's/^\#include "\(.*\)"$$/\1/p' pipeline/gyro.h)
# pc_rel DIR: DIR with a leading $(PREFIX)/ written as $${prefix}/ (a relocatable gyro.pc)
pc_rel      = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

install: all install-python
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(MANDIR)/man1 \
	  $(DESTDIR)$(DATADIR)/gyro
	install -m 755 $(BUILD)/gyro $(DESTDIR)$(BINDIR)/gyro
	install -m 644 $(BUILD)/libgyro.a $(DESTDIR)$(LIBDIR)/libgyro.a
	install -m 755 $(BUILD)/libgyro.so $(DESTDIR)$(LIBDIR)/libgyro.so.$(VERSION)
	ln -sf libgyro.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libgyro.so.0
	ln -sf libgyro.so.0 $(DESTDIR)$(LIBDIR)/libgyro.so
	install -m 644 $(BUILD)/gyro.pc $(DESTDIR)$(LIBDIR)/pkgconfig/gyro.pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/gyro
	@for h in gyro.h $(PUBLIC_H); do \
	  src=$$h; [ $$h != gyro.h ] || src=pipeline/gyro.h; [ -f "$$src" ] || src=$(BUILD)/gen/$$h; \
	  install -d $(DESTDIR)$(INCLUDEDIR)/gyro/$$(dirname $$h) || exit 1; \
	  sed -E 's,^([[:space:]]*#[[:space:]]*include[[:space:]]*)"((models|embeddings|pipeline|proto)/[^"]*)",\1<gyro/\2>,' \
	    "$$src" > $(DESTDIR)$(INCLUDEDIR)/gyro/$$h && chmod 644 $(DESTDIR)$(INCLUDEDIR)/gyro/$$h || exit 1; \
	done; echo "gyro: gyro.h and $(words $(PUBLIC_H)) public headers -> $(DESTDIR)$(INCLUDEDIR)/gyro"
	install -m 644 doc/gyro.1 $(DESTDIR)$(MANDIR)/man1/gyro.1
	install -m 644 $(PROTOS) $(DESTDIR)$(DATADIR)/gyro/
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; fi

# The Python package (pipeline/python) for PYTHON (default Debian's python3), built by pip from
# the checkout without an index or build isolation (the protobuf modules are generated from
# proto/ on the way; needs python3-pip, -setuptools, -wheel, -grpc-tools), into the site
# directory of PREFIX that pipeline/python/site_dir.py names (Debian: /usr/lib/python3/
# dist-packages for /usr, /usr/local/lib/python3.X/dist-packages for /usr/local).
# `make install PYTHON=` leaves it out.
PYTHON     ?= /usr/bin/python3
install-python:
	@if [ -n "$(PYTHON)" ]; then \
	  site=$$($(PYTHON) pipeline/python/site_dir.py '$(PREFIX)') || exit 1; \
	  $(PYTHON) -m pip --version >/dev/null 2>&1 || { echo "gyro: $(PYTHON) has no pip (make deps; or make install PYTHON= to skip the Python package)" >&2; exit 1; }; \
	  echo "gyro: Python package -> $(DESTDIR)$$site"; \
	  $(PYTHON) -m pip install -q --no-build-isolation --no-index --no-deps --no-compile --upgrade \
	    --root-user-action=ignore --target '$(DESTDIR)'"$$site" ./pipeline/python; \
	fi

clean:
	rm -rf build build-san build-*
