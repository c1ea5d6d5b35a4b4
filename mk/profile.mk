# profile/: the data model. Fuzz targets build from profile/*.c (the
# default); the pprof reader and writer need zlib.
FUZZ_SRCS_fuzz_folded := profile/profile.c profile/intern.c profile/build.c profile/folded.c \
	profile/folded_write.c
FUZZ_SRCS_fuzz_pprof := profile/profile.c profile/intern.c profile/build.c profile/protobuf.c profile/gzip.c profile/pprof_read.c profile/pprof_frames.c profile/pprof_write.c
