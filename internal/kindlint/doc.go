// Package kindlint holds a test, and nothing else: it checks that every
// registered kind (target kinds, operation kinds, load models, client
// stacks) is named as a string only in its registry, so that adding,
// renaming or removing a kind is a change to its registry file and its
// test, not a hunt through the code base. It sits above every registry it
// reads and is imported by nothing.
package kindlint
