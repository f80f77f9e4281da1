module stashbase/relay

go 1.19
