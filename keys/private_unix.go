//go:build unix

package keys

// permissionBitsApply: a file's mode says who may read it.
const permissionBitsApply = true
