// Package layering holds only a test: it checks that mcpdrill's packages
// import each other in one direction. The authority is the table allowed in
// layering_test.go, which lists for each package every project package it may
// depend on, directly or not; the package overview in README.md ("Development")
// says what each package owns and does not repeat the import rules.
package layering
