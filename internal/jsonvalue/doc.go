// Package jsonvalue holds mcpdrill's JSON value toolkit, apart from JSON
// Schema: bounded decoding (depth and number limits, exact json.Number
// text), exact decimal numbers, the JSON type of a decoded value, the
// canonical form used for fingerprints, and RFC 6901 JSON pointers.
package jsonvalue
