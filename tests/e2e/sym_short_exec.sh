# Short-lived processes that exec: like sym_short.sh, but each child execs
# a fresh image before burning, so nothing of it was known at fork time.
MODE=exec . tests/e2e/sym_short.sh
