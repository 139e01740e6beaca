// Package layering holds only a test: it checks that mcpdrill's packages
// import each other in one direction, as the package table in README.md says.
package layering
