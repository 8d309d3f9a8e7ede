// Package tools is `toolgate tools` (apply, import, ls, show, shadow and
// what-if of tool definitions), `toolgate limits`, and the executor
// groups' cover of the tools (up_groups.go), which tools apply and
// toolgate up both ask for.
package tools
