module hoprouter

go 1.18
