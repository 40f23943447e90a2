# Guest side of the harness self-test: a kernel-log report must fail the
# run even though the script itself succeeds.
echo "<4>WARNING: harness self-test, not a real problem" >/dev/kmsg
exit 0
