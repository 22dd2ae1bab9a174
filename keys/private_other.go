//go:build !unix

package keys

// permissionBitsApply: not on this platform, whose files' access is not
// told by unix permission bits (Windows' ACLs, say).
const permissionBitsApply = false
