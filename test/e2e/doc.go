// Package e2e holds end-to-end tests that drive the proxy with real Minecraft client
// and server software none of us wrote (node-minecraft-protocol, see test/nmp) across
// several Minecraft versions. It has no code of its own besides the tests.
package e2e
