// Package clitest holds the rigs the command packages' tests share: a
// real `toolgate up` process (up.go), every stage in the test process over
// an embedded NATS server (story.go), and running a command or the binary
// with its output captured (run.go). Tests only: internal/arch fails when
// a non-test package imports it.
package clitest
