// Package jsonschema owns mcpdrill's use of JSON Schema: compiling documents
// without ever fetching remote references (santhosh-tekuri/jsonschema/v6,
// "format" asserted by default), validating decoded instances with
// value-free violation messages, the one $ref resolver (ResolveRef, used by
// synthesis, by drift's ref expansion and by the error probes), synthesising
// valid instances (one per anyOf/oneOf branch), the shared payload corruption
// used by the scanner and the proxy, and the enforceability measurement of
// an output schema (Measure; the verdict over it is package scan's). JSON
// values themselves (decoding, canonical form, pointers, exact numbers) are
// internal/jsonvalue's.
//
// Every walk is bounded: documents are depth-checked before decoding and
// recursive schemas are followed with cycle guards and budgets, so hostile
// input fails fast instead of hanging or exhausting the stack.
package jsonschema
