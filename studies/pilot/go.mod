// This directory holds the pilot study data and the servers its install script
// puts in node_modules and bin; a module of its own keeps any Go package that an
// npm dependency ships out of the mcpdrill module (go test ./..., go vet ./...).
module mcpdrill.invalid/studies-pilot

go 1.26
