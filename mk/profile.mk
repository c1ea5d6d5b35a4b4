# profile/: the data model. Fuzz targets build from profile/*.c (the
# default); the pprof reader and writer need zlib.
FUZZ_SRCS_fuzz_folded := profile/profile.c profile/intern.c profile/build.c profile/folded.c \
	profile/folded_write.c profile/folded_meta.c profile/classify.c
FUZZ_SRCS_fuzz_pprof := profile/profile.c profile/intern.c profile/build.c profile/protobuf.c profile/gzip.c profile/pprof_read.c profile/pprof_frames.c profile/pprof_write.c profile/classify.c

# A Go program that writes its heap profile with runtime/pprof, its one
# dependency vendored: a profile from elsewhere, whose frames get their
# classes from Go's paths (profile/classify.c; tests/e2e/view_elsewhere.sh).
GO_HEAP_SRCS := $(wildcard tests/fixtures/goheap/*.go tests/fixtures/goheap/go.mod \
	tests/fixtures/goheap/vendor/modules.txt tests/fixtures/goheap/vendor/*/*/*.go)
$(BUILD)/fixtures/go_heap: $(GO_HEAP_SRCS)
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cd tests/fixtures/goheap && go build -mod=vendor -o $(abspath $@) .
fixtures: $(BUILD)/fixtures/go_heap
