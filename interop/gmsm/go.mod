module shangmi/interop/gmsm

go 1.25.0

require github.com/emmansun/gmsm v0.44.1

require golang.org/x/crypto v0.54.0 // indirect
