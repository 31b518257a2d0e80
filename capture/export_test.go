package capture

// CaptureFiles lists the packet captures under roots, for the tests of
// package capture_test.
var CaptureFiles = captureFiles
