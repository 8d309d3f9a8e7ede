// Package tracetest is an in-process OTLP/HTTP traces receiver for tests:
// stage processes (in the test process or as their own OS processes) export
// to its URL, and a test reads back the spans, by name or as a tree. It
// imports nothing of toolgate.
package tracetest
