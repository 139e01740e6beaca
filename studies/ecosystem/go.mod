// This directory holds the ecosystem study: its population, pinned installs
// (npm projects, venvs and Go binaries, none committed) and results. A module
// of its own keeps any Go package an npm dependency ships out of the mcpdrill
// module (go test ./..., go vet ./...); the population generator is its one
// program (go run ./population).
module mcpdrill.invalid/studies-ecosystem

go 1.26
