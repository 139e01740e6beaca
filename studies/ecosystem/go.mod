// This directory holds the ecosystem study: its population, pinned installs
// (npm projects, venvs and Go binaries; only the npm projects' manifests and
// lockfiles are committed) and results. A module of its own keeps any Go
// package an npm dependency ships out of the mcpdrill module (go test ./...,
// go vet ./...). Its population is drawn by studies/population.
module mcpdrill.invalid/studies-ecosystem

go 1.26
