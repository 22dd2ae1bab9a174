// Package logging keeps the node's log readable under attack and under
// faults: a Limiter lets a repeated line through a few times per key (a
// peer) and counts the rest, and a Handler writes every error on one line,
// its detail (a stack trace some libraries' errors print under %+v) only
// when debug logging is on.
//
// It must never know about peers, protocols or stores: keys are strings,
// errors are errors.
package logging
