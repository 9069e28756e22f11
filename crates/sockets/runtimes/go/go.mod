module tls-bench/runtimes/go

// The standard library only: no module is downloaded. 1.24 is the first
// Go with X25519MLKEM768; ConnectionState.CurveID, which the server's
// check reads back, came in 1.25.
go 1.25
