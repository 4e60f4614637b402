package events

// FleetConnectivity is published when this proxy's link to the fleet's Redis
// goes up or down, so dashboards and alerts see a proxy cut off from the fleet
// (it keeps serving players with the last state it knew).
const FleetConnectivity Type = "fleet.connectivity"

// Fleet is the Data of a fleet.connectivity event.
type Fleet struct {
	// ID is this proxy's id in the fleet.
	ID string `json:"id"`
	// Connected says whether Redis answers now.
	Connected bool `json:"connected"`
	// Error is why it does not, in words an operator can act on; empty when connected.
	Error string `json:"error,omitempty"`
	// Pending counts operator changes made here that the fleet has not
	// acknowledged yet; they are published once Redis is back.
	Pending int `json:"pending"`
	// Proxies counts the live proxies of the fleet, this one included, as last seen.
	Proxies int `json:"proxies"`
}
