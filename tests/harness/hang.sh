# Guest side of the harness self-test: a hung guest must be killed.
sleep 600
