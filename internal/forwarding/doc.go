// Package forwarding tells a backend who the player really is when the proxy,
// not the backend, terminated the Minecraft login (backends then run
// online-mode=false). It encodes, and for tests and test backends decodes,
// the three schemes backends understand:
//
//   - Velocity modern forwarding (versions 1-4): an HMAC-SHA256-signed answer
//     to the backend's "velocity:player_info" Login Plugin Request (Paper's
//     proxies.velocity, FabricProxy-Lite, ...). Needs 1.13+ clients.
//   - BungeeCord legacy forwarding: the real IP, the undashed UUID and the
//     profile properties packed into the handshake's server-address field
//     (spigot.yml settings.bungeecord). Unauthenticated.
//   - BungeeGuard: BungeeCord forwarding plus a "bungeeguard-token" property
//     the backend's BungeeGuard plugin checks.
//
// It also parses the configured Mode and loads (or creates) the shared secret
// file. Everything is pure encode/decode over []byte and strings: no
// networking and no policy.
package forwarding
