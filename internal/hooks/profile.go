package hooks

import (
	"fmt"

	"github.com/infrarust-go/infrarust/internal/auth"
)

// ProfileFromAuth is the events' view of an authenticated (or offline) profile.
func ProfileFromAuth(p auth.Profile) Profile {
	out := Profile{Name: p.Name}
	if !p.ID.IsZero() {
		out.UUID = p.ID.String()
	}
	if len(p.Properties) > 0 {
		out.Properties = make([]Property, len(p.Properties))
		for i, pr := range p.Properties {
			out.Properties[i] = Property{Name: pr.Name, Value: pr.Value, Signature: pr.Signature}
		}
	}
	return out
}

// Auth converts a profile back for forwarding and the ban check, after a
// GameProfileRequest. An empty UUID becomes the offline UUID of the name (what an
// offline-mode backend would compute). The dispatcher already refused invalid
// profiles, so an error here means the caller built one by hand.
func (p Profile) Auth() (auth.Profile, error) {
	if err := checkProfile(p); err != nil {
		return auth.Profile{}, fmt.Errorf("profile: %w", err)
	}
	out := auth.Profile{Name: p.Name, ID: auth.OfflineUUID(p.Name)}
	if p.UUID != "" {
		id, err := auth.ParseUUID(p.UUID)
		if err != nil {
			return auth.Profile{}, fmt.Errorf("profile uuid: %w", err)
		}
		out.ID = id
	}
	for _, pr := range p.Properties {
		out.Properties = append(out.Properties, auth.Property{Name: pr.Name, Value: pr.Value, Signature: pr.Signature})
	}
	return out, nil
}
