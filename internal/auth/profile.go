package auth

// Profile is an authenticated (or, offline, claimed) player identity: what the
// rest of the proxy sees and what forwarding hands to the backend.
type Profile struct {
	// ID is the player's UUID (Mojang's in client_only mode, OfflineUUID otherwise).
	ID UUID
	// Name is the player name with the session server's capitalisation.
	Name string
	// Properties are the profile properties (skin "textures" and its signature), kept exactly as received.
	Properties []Property
}

// Property is one signed profile property; backends need the value and the
// signature byte for byte to show skins, so nothing here re-encodes them.
type Property struct {
	// Name is the property's key, "textures" for skins.
	Name string `json:"name"`
	// Value is the property's payload as the session server sent it (base64 for textures).
	Value string `json:"value"`
	// Signature is the session server's base64 signature of Value; empty when unsigned.
	Signature string `json:"signature,omitempty"`
}
