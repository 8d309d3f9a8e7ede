// Package e2e drives the operator console in a real headless Chromium
// against a real `toolgate up` and the example executor. Its tests need
// the chromium binary (Debian's chromium package); without it they fail,
// naming the package to install.
package e2e
