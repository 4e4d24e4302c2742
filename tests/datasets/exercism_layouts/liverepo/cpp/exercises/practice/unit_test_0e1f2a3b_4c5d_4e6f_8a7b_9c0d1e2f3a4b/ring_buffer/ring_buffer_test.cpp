// not run
