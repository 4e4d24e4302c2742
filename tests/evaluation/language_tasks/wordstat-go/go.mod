module wordstat

go 1.18
