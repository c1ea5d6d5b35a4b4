# The option lists' test (tests/e2e/options_agree.sh) is python3 and runs
# the bash completion; install_uninstall.sh loads it with bash-completion;
# json_output.sh reads hearth status --prometheus with prometheus_client.
PKGS_TEST += python3 bash-completion python3-prometheus-client
# input_perf_script.sh records with perf and compares with perf's own
# stackcollapse.py.
PKGS_TEST += linux-perf
