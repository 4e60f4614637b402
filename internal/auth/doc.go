// Package auth holds what the proxy needs to authenticate a Minecraft player
// itself: the per-start RSA key pair of the Encryption Request, the decryption
// of the client's Encryption Response, Minecraft's server-id hash, the Mojang
// session server's hasJoined call, and the offline-mode UUID.
//
// The package makes one kind of network call (hasJoined over HTTP) and holds
// no policy beyond it: callers decide when to authenticate, what to kick with
// (KickMessage maps errors to vanilla's texts) and what to do with the Profile.
package auth
