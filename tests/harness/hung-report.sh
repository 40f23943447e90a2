# Guest side of the harness self-test: after a hung-task report the guest's
# watcher must save every blocked task's stack (sysrq w) for the host to
# print, and the report fails the run.
echo "<3>INFO: task selftest:1 blocked for more than 30 seconds." >/dev/kmsg
sleep 12
exit 0
