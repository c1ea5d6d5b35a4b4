#!/bin/sh
# The option lists agree and the completion offers them:
# tests/e2e/options_agree.py says what is compared.
command -v python3 >/dev/null || { echo "FAIL: python3 is missing (package python3)"; exit 1; }
command -v bash >/dev/null || { echo "FAIL: bash is missing"; exit 1; }
exec python3 tests/e2e/options_agree.py "$HEARTH" "$HEARTHD"
