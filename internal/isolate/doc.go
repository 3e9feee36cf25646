// Package isolate holds what the children that read customers' documents
// in a process of their own share: the bound on a child's address space
// (LimitAddressSpace, called by the child on itself), the process group
// that a cancelled child dies with together with the programs it started
// (KillGroup), and the reduced environment a child gets (Environ).
// upload/inspect (page counts) and extraction (text in the envelope
// window) start such children: the lodge executable itself, told by an
// environment variable which child to be.
package isolate
