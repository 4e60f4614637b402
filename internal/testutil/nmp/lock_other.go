//go:build !unix

package nmp

// lockFile does not lock where flock is missing; there, run `npm ci --prefix test/nmp`
// before the tests so no two test binaries install at once.
func lockFile(string) (func(), error) { return func() {}, nil }
