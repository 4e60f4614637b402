package hooks

import (
	"reflect"
	"testing"

	"github.com/infrarust-go/infrarust/internal/auth"
)

func TestProfileRoundTrip(t *testing.T) {
	id, err := auth.ParseUUID("069a79f4-44e9-4726-a5be-fca90e38aaf5")
	if err != nil {
		t.Fatal(err)
	}
	in := auth.Profile{ID: id, Name: "Notch", Properties: []auth.Property{{Name: "textures", Value: "dmFsdWU=", Signature: "c2ln"}}}
	p := ProfileFromAuth(in)
	if p.UUID != "069a79f4-44e9-4726-a5be-fca90e38aaf5" || p.Name != "Notch" || p.Properties[0].Signature != "c2ln" {
		t.Fatalf("ProfileFromAuth = %+v", p)
	}
	back, err := p.Auth()
	if err != nil || !reflect.DeepEqual(back, in) {
		t.Fatalf("Auth() = %+v, %v; want %+v", back, err, in)
	}
	// No UUID (a passthrough client before 1.20.2, or a handler that cleared it):
	// the offline UUID of the name.
	back, err = Profile{Name: "alice"}.Auth()
	if err != nil || back.ID != auth.OfflineUUID("alice") {
		t.Fatalf("Auth() without uuid = %+v, %v", back, err)
	}
	for _, bad := range []Profile{{}, {Name: "a_name_longer_than_16"}, {Name: "bob", UUID: "nope"}} {
		if _, err := bad.Auth(); err == nil {
			t.Errorf("Auth() accepted %+v", bad)
		}
	}
}
