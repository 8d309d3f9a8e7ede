// Package arch holds tests of the module's shape: which packages may
// import which, what the binaries link, what state a package may hold.
package arch
