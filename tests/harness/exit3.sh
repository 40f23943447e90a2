# Guest side of the harness self-test: the exit status must come back.
echo "guest: exiting with 3"
exit 3
