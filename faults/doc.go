// Package faults is mcpdrill's pure fault model: a plan of rules, a seeded
// per-message decision, and the action each fault takes on one frame.
//
// Nothing here does I/O, reads a clock or touches global randomness. A
// decision is a function of (seed, session, direction, rule index,
// per-direction message index) plus the rule's own match counters, so the
// same traffic under the same seed gets the same faults on the same messages
// however the proxy schedules its goroutines:
//
//	frame ──► Decider.Decide ──► Decision ──► Apply ──► Action ──► proxy executes it
//	           (matchers, counts,            (pure: bytes in,
//	            seeded roll)                  bytes/delay/drop out)
//
// Nothing a fault does may happen unless its decision fired: [Apply] of a
// decision that did not fire is always [Forward] of the original bytes.
package faults
