# The Debian packages (debian/): hearth (the command, hearthd, the unit,
# sysusers and tmpfiles files, the default config, man pages) and
# hearth-viewer (the SDL viewer, so a headless server needs no display
# libraries). `make deb` builds them with dpkg-buildpackage -us -uc -b
# from a copy of the source in $(BUILD)/deb, where the .debs land.
PKGS_DEB := dpkg-dev debhelper
PKGS_TEST += $(PKGS_DEB)

.PHONY: deb deps-deb
deps-deb: deps
	$(Q)sh mk/deps.sh $(PKGS_DEB)

deb: deps-deb
	$(call msg,DEB,$(BUILD)/deb)
	$(Q)V=$(V) sh mk/deb.sh $(BUILD)/deb $(VERSION)
