// Package natsrepro holds reproductions of upstream client defects, written
// with plain nats.go and nats-server calls (no toolgate code) so each test
// can be copied into an upstream issue as it is. Each test asserts that the
// defect still happens: when an upgrade fixes it, the test fails and says
// which workaround in toolgate can go.
package natsrepro
