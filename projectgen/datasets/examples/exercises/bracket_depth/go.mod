module bracket_depth

go 1.18
