// Package cmdutil is what every toolgate command shares: its usage lines
// (usage.go, the one place --help and `toolgate --help` read them), flags
// anywhere on the line and exit codes (flags.go), connecting to NATS as
// the admin or TOOLGATE_NATS_USER (connect.go), NATS errors said in an
// operator's words (natserr.go), and text from a call made safe to print
// (print.go). The commands live beside it, one package per group.
package cmdutil
