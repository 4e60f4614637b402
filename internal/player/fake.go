package player

import "context"

// Fake is a Player for the tests of commands and handlers: set who he is, run
// the code under test, and read what was done to him. Not for concurrent use.
type Fake struct {
	Conn            uint64
	Username        string
	ProfileID       string
	ProtocolVersion int32
	// On is the server he is on; a Connect that succeeds moves him.
	On    string
	Proof Proof
	// Permissions he has; "*" grants every one.
	Permissions map[string]bool
	// Connector answers Connect; nil: Connected (AlreadyThere to On).
	Connector func(server string) ConnectResult

	// What was done to him.
	Told           []string
	Titles         []Title
	ActionBars     []string
	PluginMessages []PluginMessage
	Kicked         bool
	KickReason     string
	Connects       []string
}

// PluginMessage is one plugin message a Fake was sent.
type PluginMessage struct {
	Channel string
	Data    []byte
}

var _ Player = (*Fake)(nil)

func (f *Fake) ID() uint64      { return f.Conn }
func (f *Fake) Name() string    { return f.Username }
func (f *Fake) UUID() string    { return f.ProfileID }
func (f *Fake) Protocol() int32 { return f.ProtocolVersion }
func (f *Fake) Server() string  { return f.On }
func (f *Fake) Proven() Proof   { return f.Proof }

func (f *Fake) HasPermission(perm string) bool { return f.Permissions["*"] || f.Permissions[perm] }

func (f *Fake) Tell(text string) error { f.Told = append(f.Told, text); return nil }
func (f *Fake) Title(t Title) error    { f.Titles = append(f.Titles, t); return nil }
func (f *Fake) ActionBar(text string) error {
	f.ActionBars = append(f.ActionBars, text)
	return nil
}

func (f *Fake) SendPluginMessage(channel string, data []byte) error {
	f.PluginMessages = append(f.PluginMessages, PluginMessage{channel, append([]byte(nil), data...)})
	return nil
}

func (f *Fake) Kick(reason string) { f.Kicked, f.KickReason = true, reason }

func (f *Fake) Connect(ctx context.Context, server string) ConnectResult {
	f.Connects = append(f.Connects, server)
	if err := ctx.Err(); err != nil {
		return ConnectResult{Status: Failed, Server: server, Reason: err.Error()}
	}
	var res ConnectResult
	switch {
	case f.Connector != nil:
		res = f.Connector(server)
	case server == f.On:
		res = ConnectResult{Status: AlreadyThere, Server: server}
	default:
		res = ConnectResult{Status: Connected, Server: server}
	}
	if res.Status == Connected {
		f.On = res.Server
	}
	return res
}
