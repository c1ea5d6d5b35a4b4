# hearthd: the store, the control socket, the daemon and their tests.

# Fuzz targets and the sources each one needs.
FUZZ_SRCS_fuzz_control := agent/control_proto.c
FUZZ_SRCS_fuzz_store_codec := agent/store_codec.c $(SRC_profile)

# `systemd-analyze verify` checks the unit and `man` the pages in the test
# suite. On a machine not booted with systemd, installing the package only
# adds the tools and files; nothing is started.
PKGS_TEST += systemd man-db
