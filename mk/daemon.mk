# hearthd: the store, the control socket, the daemon and their tests.

# Fuzz targets and the sources each one needs.
FUZZ_SRCS_fuzz_control := agent/control_proto.c
FUZZ_SRCS_fuzz_store_codec := agent/store_codec.c agent/store_codec_read.c $(SRC_profile)

# `systemd-analyze verify` checks the unit and `man` the pages in the test
# suite. On a machine not booted with systemd, installing the package only
# adds the tools and files; nothing is started.
PKGS_TEST += systemd man-db

# The boot test (tests/e2e/daemon_nspawn.sh) builds a Debian 12 root with
# debootstrap, cached in /var/cache/hearth-nspawn, and boots it with
# systemd-nspawn.
PKGS_TEST += debootstrap systemd-container

# The daemon benchmark's helper: store sizes against gzip'd folded text,
# and long synthetic stores for timing snapshots.
# (LIBS_DAEMON is defined after this fragment is read: name the libraries.)
$(BUILD)/bench/daemon_store_tool: bench/daemon_store_tool.c $(BUILD)/libagent.a \
		$(BUILD)/libsymbolize.a $(BUILD)/libprofile.a
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(LIBS_DAEMON) $(LDFLAGS) $(PKG_LIBS_CORE) $(LDLIBS_EXTRA)
