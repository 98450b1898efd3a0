# posixtrace: the POSIX Trace option for Linux.
# make            library (shared + static), examples, tools
# make check      build and run every test (tests/run.sh prints the summary)
# make demo       build and run the example that traces itself
# make bench      benchmarks (release flags)
# make layers-graph  the include graph of src/ and tools/ as Graphviz dot text
# make install    PREFIX=/usr/local DESTDIR=
# SAN=address,undefined | SAN=thread   build everything with sanitizers into build-SAN/
# NESTING=0       without events from signal handlers nested in posix_trace_event
#                 (dropped uncounted, the old behaviour): to measure what nesting costs

# The version is include/trace.h's POSIXTRACE_VERSION_*; the library's
# generation-version attribute is derived from the same macros.
version_part = $(shell sed -n 's/^\#define POSIXTRACE_VERSION_$(1) \([0-9]*\)$$/\1/p' include/trace.h)
VERSION   := $(call version_part,MAJOR).$(call version_part,MINOR).$(call version_part,PATCH)
SOVERSION := 0
PREFIX    ?= /usr/local
LIBDIR    ?= $(PREFIX)/lib
INCLUDEDIR?= $(PREFIX)/include
BINDIR    ?= $(PREFIX)/bin
MANDIR    ?= $(PREFIX)/share/man

CC        ?= cc
OPT       ?= -O2 -g
WARN      := -std=c11 -Wall -Wextra -Werror
ifdef SAN
BUILD     ?= build-$(subst $(comma),-,$(SAN))
SANFLAGS  := -fsanitize=$(SAN) -fno-omit-frame-pointer
# A sanitized process starts several times slower: the workload tests (two
# thousand process starts each) get the room Check's multiplier gives.
export CK_TIMEOUT_MULTIPLIER ?= 3
else
BUILD     ?= build
SANFLAGS  :=
endif
comma := ,
CPPFLAGS  += -D_GNU_SOURCE -Iinclude
ifeq ($(NESTING),0)
CPPFLAGS  += -DPOSIXTRACE_NO_NESTING
endif
# Intel cores with the JCC erratum's microcode (Skylake to Cascade Lake)
# keep out of their decoded-instruction cache every 32-byte window that a
# jump crosses or ends on.  The event path is short compares and jumps end
# to end: with the jumps padded off those boundaries it ran 0.5-0.8 ns
# faster on the project's bench machine (docs/PERFORMANCE.md).  gcc passes
# the option to the assembler, clang takes it itself; elsewhere (another
# architecture, an old assembler) neither.
JCC_FLAG := $(firstword $(foreach f,-Wa$(comma)-mbranches-within-32B-boundaries \
                                    -mbranches-within-32B-boundaries, \
              $(shell printf 'int x;' | $(CC) $(f) -x c -c - -o /dev/null 2>/dev/null && echo $(f))))
LIB_CFLAGS = $(WARN) $(OPT) $(SANFLAGS) -fPIC -fvisibility=hidden $(JCC_FLAG) $(CFLAGS)
APP_CFLAGS = $(WARN) $(OPT) $(SANFLAGS) $(CFLAGS)
LDLIBS    += -lpthread

# The log component (src/log/): one list, used by the library, the log's
# unit tests, the fuzzers and tests/unit/build.sh (make print-LOG_SRCS).
LOG_SRCS  := $(wildcard src/log/*.c)
LIB_SRCS  := $(wildcard src/*.c) $(LOG_SRCS)
LIB_HDRS  := $(wildcard src/*.h src/log/*.h)
LIB_OBJS  := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
SHLIB     := $(BUILD)/libposixtrace.so.$(VERSION)
STLIB     := $(BUILD)/libposixtrace.a

TEST_SRCS := $(wildcard tests/t_*.c)
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
TEST_HELPERS := $(patsubst tests/helpers/%.c,$(BUILD)/tests/helpers/%,$(wildcard tests/helpers/*.c))
EXAMPLE_BINS := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)

# Symbols for the addresses in logs (tools/symbolize.c) with elfutils'
# libdw, when pkg-config finds it (LIBDW= builds without); the command
# only: the library never links it.
LIBDW        ?= $(shell pkg-config --exists libdw 2>/dev/null && echo yes)
LIBDW_CFLAGS := $(if $(LIBDW),$(shell pkg-config --cflags libdw 2>/dev/null) -DPT_HAVE_LIBDW)
LIBDW_LIBS   := $(if $(LIBDW),$(shell pkg-config --libs libdw 2>/dev/null))

# C++ names demangled by the command (tools/demangle.c) with libstdc++'s
# __cxa_demangle, when it links (DEMANGLE= builds without).
ifeq ($(origin DEMANGLE),undefined)
DEMANGLE     := $(shell printf 'int main(void){return 0;}\n' | $(CC) -x c - -o /dev/null -lstdc++ 2>/dev/null && echo yes)
endif
LIBDW_CFLAGS += $(if $(DEMANGLE),-DPT_HAVE_DEMANGLE)
LIBDW_LIBS   += $(if $(DEMANGLE),-lstdc++)

# posixtrace export (tools/otlpsend.c) sends with libcurl and compresses
# with zlib, when pkg-config finds them (LIBCURL= or ZLIB= builds without:
# export then says why it cannot send, or compress).  These flags join the
# command's others.  libcurl is opened when export sends (dlopen), not
# linked: its libraries cost every run of the command to load.
LIBCURL      ?= $(shell pkg-config --exists libcurl 2>/dev/null && echo yes)
ZLIB         ?= $(shell pkg-config --exists zlib 2>/dev/null && echo yes)
LIBDW_CFLAGS += $(if $(LIBCURL),$(shell pkg-config --cflags libcurl 2>/dev/null) -DPT_HAVE_LIBCURL)
LIBDW_LIBS   += $(if $(LIBCURL),-ldl)
LIBDW_CFLAGS += $(if $(ZLIB),$(shell pkg-config --cflags zlib 2>/dev/null) -DPT_HAVE_ZLIB)
LIBDW_LIBS   += $(if $(ZLIB),$(shell pkg-config --libs zlib 2>/dev/null))
# convert --to perfetto --compression zstd (tools/pfbatch.c) with libzstd,
# when pkg-config finds it (ZSTD= builds without; deflate needs zlib).
ZSTD         ?= $(shell pkg-config --exists libzstd 2>/dev/null && echo yes)
LIBDW_CFLAGS += $(if $(ZSTD),$(shell pkg-config --cflags libzstd 2>/dev/null) -DPT_HAVE_ZSTD)
LIBDW_LIBS   += $(if $(ZSTD),$(shell pkg-config --libs libzstd 2>/dev/null))

# What the command is built with, in a file rewritten only when it changes
# (libdw installed since the last build, or LIBDW= given): what depends on
# the detection is rebuilt then, and only then.
TOOL_CONFIG  := $(BUILD)/tool-config
TOOL_CONFIG_TEXT := libdw=$(LIBDW) demangle=$(DEMANGLE) libcurl=$(LIBCURL) zlib=$(ZLIB) zstd=$(ZSTD) $(LIBDW_CFLAGS) $(LIBDW_LIBS)
ifeq ($(filter clean,$(MAKECMDGOALS)),)
$(shell mkdir -p $(BUILD) && { [ "$$(cat $(TOOL_CONFIG) 2>/dev/null)" = '$(TOOL_CONFIG_TEXT)' ] || \
  echo '$(TOOL_CONFIG_TEXT)' > $(TOOL_CONFIG); })
endif

.PHONY: all lib check demo bench install uninstall clean deps tests examples fuzz soak
all: lib examples

lib: $(SHLIB) $(STLIB) $(BUILD)/libposixtrace.so

# Each object depends on the headers it includes, as the compiler found them
# (-MMD -MP: BUILD/obj/NAME.d); a header changed rebuilds only its includers.
# An object without its .d (a tree built before) is built again.
$(BUILD)/obj/%.o: src/%.c $(BUILD)/obj/%.d | $(BUILD)/obj $(BUILD)/obj/log
	$(CC) $(CPPFLAGS) $(LIB_CFLAGS) -MMD -MP -c $< -o $@
$(LIB_OBJS:.o=.d):
-include $(LIB_OBJS:.o=.d)

$(SHLIB): $(LIB_OBJS) src/libposixtrace.map
	$(CC) $(LIB_CFLAGS) -shared -Wl,-soname,libposixtrace.so.$(SOVERSION) \
	  -Wl,--version-script=src/libposixtrace.map -Wl,-z,now -Wl,-z,nodelete -o $@ $(LIB_OBJS) $(LDLIBS) $(LDFLAGS)

$(BUILD)/libposixtrace.so: $(SHLIB)
	ln -sf libposixtrace.so.$(VERSION) $(BUILD)/libposixtrace.so.$(SOVERSION)
	ln -sf libposixtrace.so.$(VERSION) $@

$(STLIB): $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $(LIB_OBJS)

$(BUILD)/obj $(BUILD)/obj/log $(BUILD)/tests $(BUILD)/tests/helpers $(BUILD)/tests/harness \
  $(BUILD)/examples $(BUILD)/bench:
	mkdir -p $@

# Programs link the shared library (the way users do) with an rpath to it.
APP_LINK = -L$(BUILD) -Wl,-rpath,$(abspath $(BUILD)) -lposixtrace $(LDLIBS)

# The test harness (tests/harness.h): its functions compiled once, in an
# archive every test program links (tests/harness_trace.c, the part that
# calls the trace API, is left out of a program that does not use it).
HARNESS_SRCS := tests/harness.c tests/harness_trace.c
HARNESS := $(BUILD)/tests/libharness.a
$(BUILD)/tests/harness/%.o: tests/%.c tests/harness.h include/trace.h | $(BUILD)/tests/harness
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) $(CHECK_CFLAGS) -c $< -o $@
$(HARNESS): $(patsubst tests/%.c,$(BUILD)/tests/harness/%.o,$(HARNESS_SRCS))
	rm -f $@ && ar rcs $@ $^

$(BUILD)/tests/%: tests/%.c tests/harness.h $(HARNESS) $(BUILD)/libposixtrace.so | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) $(CHECK_CFLAGS) $< $(HARNESS) -o $@ $(APP_LINK) $(CHECK_LIBS)

$(BUILD)/tests/t_signal $(BUILD)/tests/t_sigjump: tests/sigtest.h
$(BUILD)/tests/t_log $(BUILD)/tests/t_getnext_events $(BUILD)/tests/t_loghost $(BUILD)/tests/t_logdamage $(BUILD)/tests/t_logsec $(BUILD)/tests/t_trigger $(BUILD)/tests/t_images $(BUILD)/tests/t_logsize: tests/logtest.h
$(BUILD)/tests/t_loghost: tests/logv3.h

# t_logv3 also calls the log reader's own functions (its drain bound): it
# links the static library.
$(BUILD)/tests/t_logv3: tests/t_logv3.c tests/harness.h tests/logtest.h tests/logv3.h $(HARNESS) \
  $(STLIB) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) $(CHECK_CFLAGS) $< $(HARNESS) $(STLIB) -o $@ $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/tests/helpers/%: tests/helpers/%.c tests/harness.h $(BUILD)/libposixtrace.so | $(BUILD)/tests/helpers
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) $< -o $@ $(APP_LINK)

# An attacker that does not load the library (t_isolation), whatever the
# linker's --as-needed default (the sanitizers' link turns it off).
$(BUILD)/tests/helpers/tree_thief: tests/helpers/tree_thief.c | $(BUILD)/tests/helpers
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) $< -o $@ $(LDLIBS)

$(BUILD)/examples/%: examples/%.c $(BUILD)/libposixtrace.so | $(BUILD)/examples
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) $< -o $@ $(APP_LINK)

# Benchmarks call the shared library, as applications do; the floor
# (bench/floor.c) uses nothing of the library.
$(BUILD)/bench/%: bench/%.c bench/loopclock.h $(BUILD)/libposixtrace.so | $(BUILD)/bench
	$(CC) $(CPPFLAGS) $(WARN) -O2 -g $< -o $@ $(APP_LINK)

$(BUILD)/bench/floor: bench/floor.c bench/loopclock.h | $(BUILD)/bench
	$(CC) $(CPPFLAGS) $(WARN) -O2 -g $< -o $@ $(LDLIBS)

examples: $(EXAMPLE_BINS)
tests: $(TEST_BINS) $(TEST_HELPERS)

# Programs the command's tests run (tests/cli/*.c), built as the examples are.
CLI_HELPERS := $(patsubst tests/cli/%.c,$(BUILD)/tests/cli/%,$(wildcard tests/cli/*.c))
tests: $(CLI_HELPERS)
$(BUILD)/tests/cli:
	mkdir -p $@
$(BUILD)/tests/cli/%: tests/cli/%.c $(BUILD)/libposixtrace.so | $(BUILD)/tests/cli
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) $< -o $@ $(APP_LINK)
# ptemit linked -static with the static library (tests/cli/static.sh): no
# libposixtrace in its mappings.  The sanitizers' runtimes cannot be linked
# statically, so a sanitized build links it with the library's sources
# compiled without them (the command attaching to it is what is tested).
CLI_STATIC := $(BUILD)/tests/cli/ptemit-static
tests: $(CLI_STATIC)
ifdef SAN
$(CLI_STATIC): tests/cli/ptemit.c $(LIB_SRCS) $(LIB_HDRS) include/trace.h | $(BUILD)/tests/cli
	$(CC) $(CPPFLAGS) $(WARN) $(OPT) -static $< $(LIB_SRCS) -o $@ $(LDLIBS)
else
$(CLI_STATIC): tests/cli/ptemit.c $(STLIB) | $(BUILD)/tests/cli
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) -static $< $(STLIB) -o $@ $(LDLIBS)
endif

# The symbols checks' programs (tests/cli/symbols.sh): a -g PIE, the shared
# library it links, a plug-in it dlopens; the program built again with
# -DREBUILT (another build id).
SYM_DIR  := $(BUILD)/tests/cli/sym
SYM_BINS := $(addprefix $(SYM_DIR)/,sym_app sym_app_rebuilt libsymlib.so sym_plugin.so)
tests: $(SYM_BINS)
$(SYM_DIR):
	mkdir -p $@
$(SYM_DIR)/libsymlib.so: tests/cli/sym/symlib.c $(BUILD)/libposixtrace.so | $(SYM_DIR)
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) -g -fPIC -shared $< -o $@ $(APP_LINK)
$(SYM_DIR)/sym_plugin.so: tests/cli/sym/plugin.c $(BUILD)/libposixtrace.so | $(SYM_DIR)
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) -g -fPIC -shared $< -o $@ $(APP_LINK)
$(SYM_DIR)/sym_app: tests/cli/sym/app.c $(SYM_DIR)/libsymlib.so | $(SYM_DIR)
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) -g -fPIE -pie $< -o $@ -L$(SYM_DIR) \
	  -Wl,-rpath,$(abspath $(SYM_DIR)) -lsymlib $(APP_LINK) -ldl
$(SYM_DIR)/sym_app_rebuilt: tests/cli/sym/app.c $(SYM_DIR)/libsymlib.so | $(SYM_DIR)
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) -DREBUILT -g -fPIE -pie $< -o $@ -L$(SYM_DIR) \
	  -Wl,-rpath,$(abspath $(SYM_DIR)) -lsymlib $(APP_LINK) -ldl

# A C++ template method's call sites, demangled (tests/cli/names.sh), when
# a C++ compiler is there.
ifneq ($(shell command -v $(CXX) 2>/dev/null),)
tests: $(SYM_DIR)/sym_worker
$(SYM_DIR)/sym_worker: tests/cli/sym/worker.cc $(BUILD)/libposixtrace.so | $(SYM_DIR)
	$(CXX) $(CPPFLAGS) -std=c++11 -O2 -Wall -Wextra -Werror -g $(SANFLAGS) $(CFLAGS) $< -o $@ \
	  $(APP_LINK)
endif

# posix_prog_address at call sites (t_callsite): tests/callsite/site.c built as C
# and as C++ at -O0, -O1 and -O2 by gcc and by clang when present, as programs
# with plain flags are.  Sanitized builds use $(CC) and $(CXX) only (one
# sanitizer runtime per process).
ifdef SAN
SITE_TOOLS := $(CC):$(CXX)
else
SITE_TOOLS := $(foreach t,gcc:g++ clang:clang++,$(if $(shell command -v $(word 1,$(subst :, ,$(t))) 2>/dev/null),$(t)))
endif
SITE_FLAGS = -D_GNU_SOURCE -Iinclude -Wall -Wextra -Werror -g -rdynamic $(SANFLAGS) $(CFLAGS)
SITE_BINS :=
define site_rules
$(BUILD)/tests/helpers/site-$(1)-c-O$(3): tests/callsite/site.c include/trace.h $(BUILD)/libposixtrace.so | $(BUILD)/tests/helpers
	$(1) -std=c11 -O$(3) $$(SITE_FLAGS) $$< -o $$@ $$(APP_LINK) -ldl
$(BUILD)/tests/helpers/site-$(1)-cxx-O$(3): tests/callsite/site.c include/trace.h $(BUILD)/libposixtrace.so | $(BUILD)/tests/helpers
	$(2) -x c++ -std=c++11 -O$(3) $$(SITE_FLAGS) $$< -x none -o $$@ $$(APP_LINK) -ldl
SITE_BINS += $(BUILD)/tests/helpers/site-$(1)-c-O$(3) $(BUILD)/tests/helpers/site-$(1)-cxx-O$(3)
endef
$(foreach t,$(SITE_TOOLS),$(foreach o,0 1 2,$(eval $(call site_rules,$(word 1,$(subst :, ,$(t))),$(word 2,$(subst :, ,$(t))),$(o)))))
tests: $(SITE_BINS)

# t_dlopen: a host that does not link the library (dl_host) loads and unloads a
# plugin that does (dl_plugin.so); dl_filler.so and dl_filler8.so use up static TLS.
DL_HELPERS := $(addprefix $(BUILD)/tests/helpers/,dl_host dl_plugin.so dl_filler.so dl_filler8.so)
$(BUILD)/tests/helpers/dl_host: tests/dlopen/host.c | $(BUILD)/tests/helpers
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) $< -o $@ -ldl $(LDLIBS)
$(BUILD)/tests/helpers/dl_plugin.so: tests/dlopen/plugin.c $(BUILD)/libposixtrace.so | $(BUILD)/tests/helpers
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) -fPIC -shared $< -o $@ $(APP_LINK)
$(BUILD)/tests/helpers/dl_filler.so: tests/dlopen/filler.c | $(BUILD)/tests/helpers
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) -fPIC -shared $< -o $@
$(BUILD)/tests/helpers/dl_filler8.so: tests/dlopen/filler.c | $(BUILD)/tests/helpers
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) -DFILLER_SIZE=8 -fPIC -shared $< -o $@
tests: $(DL_HELPERS)

deps:
	@sh scripts/install-deps.sh

# Checks that are scripts, each ending with "N passed, N failed": the
# public headers in every language mode, the reference pages, the exports,
# the layers of src/, the build's own dependency on what it detected.
SCRIPT_CHECKS := header:tests/header/check.sh man:tests/man/check.sh abi:tests/abi/check.sh \
  layers:tests/layers/check.sh build:tests/build/check.sh

# The script checks' counts join the test runner's summary line.  With
# TESTS="t_x ..." (names of tests/t_*.c programs, or cli) only those run,
# without the dependency step and the script checks; CK_RUN_CASE=NAME in
# the environment runs one test case of a program.
# With TESTS, only what those programs run is built: the library, the
# command, the helpers, and the programs named (cli: everything).
CHECK_BUILD = $(if $(TESTS),lib $(BUILD)/posixtrace $(TEST_HELPERS) $(DL_HELPERS) \
  $(if $(filter t_callsite,$(TESTS)),$(SITE_BINS)) \
  $(foreach t,$(TESTS),$(if $(filter cli,$(t)),all tests,$(BUILD)/tests/$(t))),all tests)
check: $(if $(TESTS),,deps)
	@$(MAKE) --no-print-directory $(CHECK_BUILD)
	@mkdir -p $(BUILD) && passed=0; failed=0; for c in $(if $(TESTS),,$(SCRIPT_CHECKS)); do \
	  name=$${c%%:*}; script=$${c#*:}; log=$(BUILD)/$$name-check.log; \
	  sh $$script $(BUILD) > $$log 2>&1; grep -v '^ok' $$log | sed "s/^/[$$name] /"; \
	  set -- $$(tail -n 1 $$log | tr -d ,); \
	  if [ "$$2" = passed ] && [ "$$4" = failed ]; then \
	    passed=$$((passed + $$1)); failed=$$((failed + $$3)); \
	  else failed=$$((failed + 1)); fi; done; \
	  PT_EXTRA_PASSED=$$passed PT_EXTRA_FAILED=$$failed BUILD=$(BUILD) sh tests/run.sh $(TESTS)

# The consumers of damaged stream memory (shapes, floods) and what they share.
$(BUILD)/tests/t_consumer $(BUILD)/tests/t_consumerbounds: $(BUILD)/tests/%: tests/%.c tests/consumer.c \
  tests/consumer.h tests/harness.h $(HARNESS) $(BUILD)/libposixtrace.so | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) $(CHECK_CFLAGS) $< tests/consumer.c $(HARNESS) -o $@ $(APP_LINK) \
	  $(CHECK_LIBS)

# The workload programs (processes, threads) and what they share.
$(BUILD)/tests/t_workload $(BUILD)/tests/t_wlthreads: $(BUILD)/tests/%: tests/%.c tests/workload.c \
  tests/workload.h tests/harness.h $(HARNESS) $(BUILD)/libposixtrace.so | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) $(CHECK_CFLAGS) $< tests/workload.c $(HARNESS) -o $@ $(APP_LINK) \
	  $(CHECK_LIBS)

# The command's helpers, compiled into their test.
$(BUILD)/tests/t_toolutil: tools/util.c tools/tool.c tools/tool.h tools/sketch.c tools/sketch.h

# The symbolizer, compiled into its test (with and without libdw), with
# debug information to read back; sym_nopie: a program at fixed addresses.
$(BUILD)/tests/t_symbolize: tests/t_symbolize.c tests/harness.h $(HARNESS) tests/symbolize/image.h \
  tools/symbolize.c tools/symbolize.h include/posixtrace.h $(BUILD)/libposixtrace.so \
  $(BUILD)/tests/helpers/sym_nopie $(TOOL_CONFIG) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(LIBDW_CFLAGS) $(APP_CFLAGS) -g $(CHECK_CFLAGS) $< $(HARNESS) -o $@ $(APP_LINK) \
	  $(CHECK_LIBS) $(LIBDW_LIBS)
# The confined symbolizer (tools/symproc.c, over tools/symbolize.c),
# compiled into its test, which also runs the command on logs of
# symproc_app with the symbols checks' plug-in and library.
$(BUILD)/tests/t_symproc: tests/t_symproc.c tests/harness.h $(HARNESS) tests/logtest.h tests/logv3.h \
  tools/symproc.c tools/symproc.h tools/demangle.c tools/demangle.h \
  tools/symbolize.c tools/symbolize.h include/posixtrace.h $(BUILD)/libposixtrace.so \
  $(BUILD)/tests/helpers/symproc_app $(SYM_DIR)/sym_plugin.so $(SYM_DIR)/libsymlib.so | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(LIBDW_CFLAGS) $(APP_CFLAGS) $(CHECK_CFLAGS) $< tools/symproc.c \
	  tools/symbolize.c tools/demangle.c $(HARNESS) -o $@ $(APP_LINK) $(CHECK_LIBS) $(LIBDW_LIBS)
# t_symengine: the symbolizer on files the test crafts (ELF and DWARF
# written byte by byte, a zlib-compressed section: -lz).
$(BUILD)/tests/t_symengine: tests/t_symengine.c tests/harness.h $(HARNESS) tests/symbolize/image.h \
  tests/symbolize/craft.h tools/symbolize.c tools/symbolize.h include/posixtrace.h \
  $(BUILD)/libposixtrace.so | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(LIBDW_CFLAGS) $(APP_CFLAGS) -g $(CHECK_CFLAGS) $< $(HARNESS) -o $@ \
	  $(APP_LINK) $(CHECK_LIBS) $(LIBDW_LIBS) -lz
$(BUILD)/tests/helpers/sym_nopie: tests/symbolize/nopie.c tests/symbolize/image.h \
  include/posixtrace.h | $(BUILD)/tests/helpers
	$(CC) $(CPPFLAGS) $(WARN) -O1 -g -fno-pie -no-pie $< -o $@

# The log module's unit tests (tests/unit/t_logformat.c): built from the
# module's own sources, without the rest of the library (the reader's
# included by the test, which looks inside it), and run by tests/run.sh
# with the other test programs.
# What the log needs below it: src/memcheck.c.
LOG_BELOW_SRCS := src/memcheck.c
$(BUILD)/tests/t_logformat: tests/unit/t_logformat.c tests/harness.h $(HARNESS) $(LOG_SRCS) \
  $(LOG_BELOW_SRCS) $(LIB_HDRS) include/trace.h | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) $(CHECK_CFLAGS) tests/unit/t_logformat.c \
	  $(filter-out src/log/logread.c,$(LOG_SRCS)) $(LOG_BELOW_SRCS) $(HARNESS) -o $@ $(CHECK_LIBS) $(LDLIBS)
tests: $(BUILD)/tests/t_logformat

# The consumers of stream memory on images a test writes
# (tests/unit/t_streamimg.c, tests/streamimg.h): the test links the static
# library, whose internal functions it calls.
$(BUILD)/tests/t_streamimg: tests/unit/t_streamimg.c tests/harness.h tests/streamimg.h $(HARNESS) \
  $(STLIB) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) $(CHECK_CFLAGS) $< $(HARNESS) $(STLIB) -o $@ $(CHECK_LIBS) $(LDLIBS)
tests: $(BUILD)/tests/t_streamimg

# The reader's translation of ids of other pid namespaces
# (tests/unit/t_pidmap.c): linked with the static library, opendir and
# readdir wrapped so that the test counts every look through /proc.
$(BUILD)/tests/t_pidmap: tests/unit/t_pidmap.c tests/harness.h $(HARNESS) $(STLIB) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(APP_CFLAGS) $(CHECK_CFLAGS) $< $(HARNESS) $(STLIB) -Wl,--wrap=opendir,--wrap=readdir \
	  -o $@ $(CHECK_LIBS) $(LDLIBS)
tests: $(BUILD)/tests/t_pidmap

# Long runs of the workload tests, the command's stats and convert on logs
# of the sizes that once cost them most, the keepers under random kills
# and under other users' floods,
# and the symbolizer against the attacks at full size
# (tests/soak/symbols.sh), for people, not CI.
soak: all tests $(BUILD)/tests/soak/symsoak
	@sh tests/soak/workload.sh $(BUILD)
	@sh tests/soak/toolbounds.sh $(BUILD)
	@sh tests/soak/loss.sh $(BUILD)
	@sh tests/soak/symbols.sh $(BUILD)
	@sh tests/soak/keeper.sh $(BUILD)

$(BUILD)/tests/soak:
	mkdir -p $@
$(BUILD)/tests/soak/symsoak: tests/soak/symsoak.c tests/symbolize/craft.h tests/symbolize/image.h \
  tools/symbolize.c tools/symbolize.h include/posixtrace.h | $(BUILD)/tests/soak
	$(CC) $(CPPFLAGS) $(LIBDW_CFLAGS) $(APP_CFLAGS) $< tools/symbolize.c -o $@ $(LIBDW_LIBS) -lz

# The walkthrough shows symbols (libdw) and reads CTF back (babeltrace2):
# the dependency step first, then a build that sees what it installed.
demo:
	@sh scripts/install-deps.sh || echo "demo: going on without them"
	@$(MAKE) --no-print-directory all
	@sh examples/demo.sh $(BUILD)

# bench_event also against a library built with NESTING=0 (BUILD/nonest):
# what events from signal handlers cost the common path.  bench/run.sh
# builds the baseline libraries itself (0.2.0 and 22ad7c4, from git archive
# into BUILD/bench/base-COMMIT, once) and counts the untraced event's
# instructions with callgrind when valgrind is installed.
bench: $(BENCH_BINS) $(BUILD)/posixtrace
	@$(MAKE) --no-print-directory NESTING=0 BUILD=$(BUILD)/nonest $(BUILD)/nonest/bench/bench_event
	@CC="$(CC)" sh bench/run.sh $(BUILD)

install: lib
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 include/trace.h $(DESTDIR)$(INCLUDEDIR)/trace.h
	install -m 644 include/posixtrace.h $(DESTDIR)$(INCLUDEDIR)/posixtrace.h
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libposixtrace.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libposixtrace.so.$(SOVERSION)
	ln -sf libposixtrace.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libposixtrace.so
	install -m 644 $(STLIB) $(DESTDIR)$(LIBDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    posixtrace.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/posixtrace.pc

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/trace.h $(DESTDIR)$(INCLUDEDIR)/posixtrace.h \
	      $(DESTDIR)$(LIBDIR)/libposixtrace.* \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/posixtrace.pc

# libFuzzer (clang, ASan + UBSan), FUZZ_SECONDS in all, in five parts.
# Over trace logs: fuzz_log (the whole library built in, through
# posix_trace_open and the calls on a pre-recorded stream) and fuzz_logread
# (the log reader, src/log/logread.c, with the rest of the log) mutate bytes, with CRCs not checked
# (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION); fuzz_logcraft is structure
# aware: its input is a program that writes a log with every CRC right
# (records, sequence numbers, holes, forged headers), read with the checks
# the library has.  The byte fuzzers start from one seed corpus of real logs
# that make_seeds writes with the library (every log-full-policy, a log
# written to a pipe, names, damaged and cut copies).  Over stream memory
# images: fuzz_stream (the reader's drain and live calls, a LOOP writer's
# steal).  Over ELF images: fuzz_symbolize (the symbolizer's parsing,
# tools/symbolize.c with libdw, in process, with its budgets), from seeds
# sym_seeds crafts.  Each target keeps what it finds in a corpus of its own, and
# crashes in $(FUZZ_DIR)/crash-*.
# Everything is built first (the library's sources compiled once for the
# fuzzers, into FUZZ_DIR/obj), then the five parts run, each for its fifth
# of FUZZ_SECONDS: as many at once as make's -j allows, each part's output
# printed whole when it ends.
FUZZ_SECONDS ?= 60
FUZZ_DIR ?= $(BUILD)/fuzz
FUZZ_CFLAGS_CRC = $(CPPFLAGS) $(WARN) -O1 -g -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=all
FUZZ_CFLAGS = $(FUZZ_CFLAGS_CRC) -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
FUZZ_RUN = -max_total_time=$$(($(FUZZ_SECONDS) / 5 > 0 ? $(FUZZ_SECONDS) / 5 : 1)) \
  -max_len=524288 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
  -artifact_prefix=$(FUZZ_DIR)/
# The library's objects as the byte fuzzers build them (-fsanitize=fuzzer
# only instruments them: the fuzzers' entry points are in their own files).
FUZZ_OBJS := $(patsubst src/%.c,$(FUZZ_DIR)/obj/%.o,$(LIB_SRCS))
FUZZ_LOG_OBJS := $(patsubst src/%.c,$(FUZZ_DIR)/obj/%.o,$(filter-out src/log/logread.c,$(LOG_SRCS)) \
  $(LOG_BELOW_SRCS))
FUZZ_BINS := $(addprefix $(FUZZ_DIR)/,fuzz_log fuzz_stream fuzz_logread fuzz_logcraft make_seeds)
FUZZ_PARTS := log logread logcraft stream symbolize

.PHONY: fuzz fuzz-bins $(addprefix fuzz-run-,$(FUZZ_PARTS))
fuzz:
	@$(MAKE) --no-print-directory fuzz-bins $(FUZZ_SYM_BINS)
	@$(MAKE) --no-print-directory fuzz-seeds fuzz-sym-seeds
	@$(MAKE) --no-print-directory --output-sync=target $(addprefix fuzz-run-,$(FUZZ_PARTS))
fuzz-bins: $(FUZZ_BINS)

$(FUZZ_DIR)/obj $(FUZZ_DIR)/obj/log:
	mkdir -p $@
$(FUZZ_DIR)/obj/%.o: src/%.c $(LIB_HDRS) include/trace.h include/posixtrace.h \
  | $(FUZZ_DIR)/obj $(FUZZ_DIR)/obj/log
	clang $(FUZZ_CFLAGS) -c $< -o $@
$(FUZZ_DIR)/fuzz_log: tests/fuzz/fuzz_log.c tests/fuzz/fuzz_common.h $(FUZZ_OBJS)
	clang $(FUZZ_CFLAGS) $< $(FUZZ_OBJS) -o $@ -lpthread
$(FUZZ_DIR)/fuzz_stream: tests/fuzz/fuzz_stream.c tests/streamimg.h $(FUZZ_OBJS)
	clang $(FUZZ_CFLAGS) $< $(FUZZ_OBJS) -o $@ -lpthread
$(FUZZ_DIR)/fuzz_logread: tests/fuzz/fuzz_logread.c tests/fuzz/fuzz_common.h tests/fuzz/fuzz_logr.h \
  $(FUZZ_LOG_OBJS)
	clang $(FUZZ_CFLAGS) $< $(FUZZ_LOG_OBJS) -o $@ -lpthread
# With the CRCs checked: the log's sources built with other flags.
$(FUZZ_DIR)/fuzz_logcraft: tests/fuzz/fuzz_logcraft.c tests/fuzz/fuzz_common.h tests/fuzz/fuzz_logr.h \
  $(LOG_SRCS) $(LOG_BELOW_SRCS) $(LIB_HDRS) | $(FUZZ_DIR)/obj
	clang $(FUZZ_CFLAGS_CRC) $< $(LOG_SRCS) $(LOG_BELOW_SRCS) -o $@ -lpthread
# The seeds are written by the library as applications link it.
$(FUZZ_DIR)/make_seeds: tests/fuzz/make_seeds.c $(STLIB) | $(FUZZ_DIR)/obj
	$(CC) $(CPPFLAGS) $(WARN) -O2 $< $(STLIB) -o $@ -lpthread

# The seeds, made anew by each make fuzz; each part keeps its corpus.
.PHONY: fuzz-seeds fuzz-sym-seeds
fuzz-seeds: $(FUZZ_DIR)/make_seeds
	rm -rf $(FUZZ_DIR)/seeds && mkdir -p $(FUZZ_DIR)/seeds
	$(FUZZ_DIR)/make_seeds $(FUZZ_DIR)/seeds
fuzz-run-log: $(FUZZ_DIR)/fuzz_log
	@mkdir -p $(FUZZ_DIR)/corpus-log
	$(FUZZ_DIR)/fuzz_log $(FUZZ_RUN) $(FUZZ_DIR)/corpus-log $(FUZZ_DIR)/seeds
fuzz-run-logread: $(FUZZ_DIR)/fuzz_logread
	@mkdir -p $(FUZZ_DIR)/corpus-logread
	$(FUZZ_DIR)/fuzz_logread $(FUZZ_RUN) $(FUZZ_DIR)/corpus-logread $(FUZZ_DIR)/seeds
fuzz-run-logcraft: $(FUZZ_DIR)/fuzz_logcraft
	@mkdir -p $(FUZZ_DIR)/corpus-logcraft
	$(FUZZ_DIR)/fuzz_logcraft $(FUZZ_RUN) $(FUZZ_DIR)/corpus-logcraft
fuzz-run-stream: $(FUZZ_DIR)/fuzz_stream
	@mkdir -p $(FUZZ_DIR)/corpus-stream
	$(FUZZ_DIR)/fuzz_stream $(FUZZ_RUN) $(FUZZ_DIR)/corpus-stream

# The symbolizer's part alone (needs libdw).
FUZZ_SYM_BINS := $(FUZZ_DIR)/fuzz_symbolize $(FUZZ_DIR)/sym_seeds
.PHONY: fuzz-symbolize
fuzz-symbolize: $(FUZZ_SYM_BINS)
	@$(MAKE) --no-print-directory fuzz-sym-seeds
	@$(MAKE) --no-print-directory fuzz-run-symbolize
$(FUZZ_DIR)/fuzz_symbolize: tests/fuzz/fuzz_symbolize.c tools/symbolize.c tools/symbolize.h \
  $(TOOL_CONFIG) | $(FUZZ_DIR)/obj
	clang $(FUZZ_CFLAGS_CRC) $(LIBDW_CFLAGS) $< tools/symbolize.c -o $@ $(LIBDW_LIBS)
$(FUZZ_DIR)/sym_seeds: tests/fuzz/sym_seeds.c | $(FUZZ_DIR)/obj
	$(CC) $(CPPFLAGS) $(WARN) -O2 $< -o $@
fuzz-sym-seeds: $(FUZZ_DIR)/sym_seeds
	rm -rf $(FUZZ_DIR)/seeds-symbolize && mkdir -p $(FUZZ_DIR)/seeds-symbolize
	$(FUZZ_DIR)/sym_seeds $(FUZZ_DIR)/seeds-symbolize
fuzz-run-symbolize: $(FUZZ_SYM_BINS)
	@mkdir -p $(FUZZ_DIR)/corpus-symbolize
	$(FUZZ_DIR)/fuzz_symbolize $(FUZZ_RUN) $(FUZZ_DIR)/corpus-symbolize $(FUZZ_DIR)/seeds-symbolize

clean:
	rm -rf build build-*

# --- posixtrace(1), the command-line tool (tools/) --------------------------
# A client of the public API: built from tools/*.c against the shared library
# with an rpath, part of `all`; installed with its man pages by `install`.
TOOL      := $(BUILD)/posixtrace
TOOL_SRCS := $(wildcard tools/*.c)

all: $(TOOL)

TOOL_OBJS := $(patsubst tools/%.c,$(BUILD)/tool-obj/%.o,$(TOOL_SRCS))

# Compiled a file at a time, with generated header dependencies as the
# library's; every object also depends on what was detected (TOOL_CONFIG).
$(BUILD)/tool-obj:
	mkdir -p $@
$(BUILD)/tool-obj/%.o: tools/%.c $(BUILD)/tool-obj/%.d $(TOOL_CONFIG) | $(BUILD)/tool-obj
	$(CC) $(CPPFLAGS) $(LIBDW_CFLAGS) $(APP_CFLAGS) -MMD -MP -c $< -o $@
$(TOOL_OBJS:.o=.d):
-include $(TOOL_OBJS:.o=.d)

$(TOOL): $(TOOL_OBJS) $(BUILD)/libposixtrace.so $(TOOL_CONFIG)
	$(CC) $(APP_CFLAGS) $(TOOL_OBJS) -o $@ $(APP_LINK) $(LIBDW_LIBS)

# The include graph of src/, src/log/ and tools/ in Graphviz's dot language,
# one box per folder, each file labelled with its layer (docs/DESIGN.md,
# "Layers and files"): make layers-graph | dot -Tsvg > layers.svg.  The
# objects are built first (the tools' inline calls are arrows too), their
# commands on standard error.
.PHONY: layers-graph layers-graph-objects
layers-graph:
	@$(MAKE) --no-print-directory layers-graph-objects >&2
	@sh tests/layers/check.sh $(BUILD) --dot
layers-graph-objects: $(LIB_OBJS) $(TOOL_OBJS)
	@:

# The command with the Perfetto converter's set of interned entries bounded
# at 6 (tests/cli/perfetto.sh: sequences cleared and started again and
# again, as a log with more names, call sites and threads than the set
# holds makes them); and the data values' hashes of one bit, so that
# values collide as a crafted log could make them.
CLI_SMALL_INTERN := $(BUILD)/tests/cli/posixtrace-small-intern
tests: $(CLI_SMALL_INTERN)
$(CLI_SMALL_INTERN): $(TOOL_SRCS) $(wildcard tools/*.h) $(BUILD)/libposixtrace.so $(TOOL_CONFIG) \
  | $(BUILD)/tests/cli
	$(CC) $(CPPFLAGS) $(LIBDW_CFLAGS) $(APP_CFLAGS) -DPERFETTO_INTERN_MAX=6 \
	  -DPERFETTO_VALUE_HASH_BITS=1 $(TOOL_SRCS) -o $@ \
	  $(APP_LINK) $(LIBDW_LIBS)

.PHONY: install-tool uninstall-tool
install: install-tool
install-tool: lib $(TOOL)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	$(CC) $(CPPFLAGS) $(LIBDW_CFLAGS) $(APP_CFLAGS) $(TOOL_SRCS) -o $(BUILD)/posixtrace.install \
	  -L$(BUILD) -Wl,-rpath,$(LIBDIR) -lposixtrace $(LDLIBS) $(LIBDW_LIBS)
	install -m 755 $(BUILD)/posixtrace.install $(DESTDIR)$(BINDIR)/posixtrace
	install -m 644 docs/posixtrace.1 $(DESTDIR)$(MANDIR)/man1/posixtrace.1

uninstall: uninstall-tool
uninstall-tool:
	rm -f $(DESTDIR)$(BINDIR)/posixtrace $(DESTDIR)$(MANDIR)/man1/posixtrace.1

# --- reference pages and the documents they cite ----------------------------
DOCDIR    ?= $(PREFIX)/share/doc/posixtrace
MAN3      := $(wildcard docs/man/man3/*.3)
DOCS      := docs/CONFORMANCE.md docs/LOG-FORMAT.md docs/SECURITY.md LICENSE

.PHONY: install-man uninstall-man
install: install-man
install-man:
	install -d $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(DOCDIR)
	install -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3/
	sed 's|/usr/local/share/doc/posixtrace|$(DOCDIR)|g' docs/man/man7/posixtrace.7 \
	  > $(DESTDIR)$(MANDIR)/man7/posixtrace.7
	chmod 644 $(DESTDIR)$(MANDIR)/man7/posixtrace.7
	install -m 644 $(DOCS) $(DESTDIR)$(DOCDIR)/

uninstall: uninstall-man
uninstall-man:
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(MAN3))) \
	      $(DESTDIR)$(MANDIR)/man7/posixtrace.7
	rm -rf $(DESTDIR)$(DOCDIR)

# A variable's value, for scripts that share the Makefile's lists
# (tests/unit/build.sh: make print-LOG_SRCS).
print-%:
	@echo $($*)
