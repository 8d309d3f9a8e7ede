// Package doccheck finds the dead links of the repository's Markdown
// pages: a relative link to a file that does not exist, or an #anchor that
// matches no heading of its page (GitHub's anchors). Its test runs over
// README.md, CONTRIBUTING.md and every docs/**/*.md in `make test`.
package doccheck
