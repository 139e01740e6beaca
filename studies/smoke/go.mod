// The study smoke's directory: study install puts npm packages, a venv and a
// Go binary here; a module of its own keeps any Go package an npm dependency
// ships out of the mcpdrill module.
module mcpdrill.invalid/studies-smoke

go 1.26
