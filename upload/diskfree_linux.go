package upload

import "golang.org/x/sys/unix"

// diskFree returns the bytes free to an unprivileged writer on the disk
// holding dir.
func diskFree(dir string) (uint64, bool) {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}
