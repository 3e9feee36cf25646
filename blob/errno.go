package blob

import "syscall"

// errNotDir is the error of a path through a file ("a/b" where a is a
// file): for the stores, no object.
var errNotDir error = syscall.ENOTDIR
