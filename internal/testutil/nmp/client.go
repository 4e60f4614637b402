package nmp

import (
	"encoding/json"
	"time"
)

const (
	// defaultClientTimeout is the client script's own deadline when none is given.
	defaultClientTimeout = 60 * time.Second // node compiles its protocol tables on first use: slow on a loaded 2-core machine
	// processSlack is how much longer than its own deadline a script may take before
	// Go kills it (node start-up on a busy machine).
	processSlack = 30 * time.Second
)

// OnlineLogin makes the client log in the online-mode way: before answering the
// server's Encryption Request it posts a join to SessionServer, as the vanilla client
// does against Mojang. No Microsoft or Mojang account is involved.
type OnlineLogin struct {
	// SessionServer is the base URL; the client posts to SessionServer+"/session/minecraft/join".
	SessionServer string
	// AccessToken is sent in the join ("" means "e2e-token").
	AccessToken string
	// ProfileID is the profile UUID sent in the join (32 hex digits or dashed); "" means
	// the offline UUID of the username.
	ProfileID string
}

// LoginOptions configure one client.js login.
type LoginOptions struct {
	// Addr is where to connect (host:port), e.g. the proxy.
	Addr string
	// ServerHost is the hostname written in the handshake, which the proxy routes on;
	// "" means the host of Addr.
	ServerHost string
	// Version is the Minecraft version, e.g. "1.8.8".
	Version string
	// Username is the player name; "" means "Player".
	Username string
	// Online, if set, logs in the online-mode way against a session server.
	Online *OnlineLogin
	// Channel is the plugin message channel; "" means "infrarust:echo".
	Channel string
	// Sizes are the payload sizes to send once spawned; each must come back byte-exact.
	Sizes []int
	// Fill is "random", "pattern" or "mixed" (alternating; the default).
	Fill string
	// KeepAlives makes the client stay until it has answered this many keep-alives.
	KeepAlives int
	// Stay is how long the client then stays connected.
	Stay time.Duration
	// Tick, while staying, sends a small plugin message this often and counts its
	// echoes, to see that whichever server the player is on answers.
	Tick time.Duration
	// UntilKicked makes the client stay until the server disconnects it; OK then means
	// it was spawned and then kicked. With Tick it ticks from the moment it is spawned.
	UntilKicked bool
	// KeepAliveTimeout makes the client give up, as a vanilla client does, when no
	// keep-alive came for this long after the last one; 0 means Timeout.
	KeepAliveTimeout time.Duration
	// Commands are chat lines or commands ("/server b") typed once spawned,
	// CommandGap apart; then the completions of Tab ("/server ") are asked, and
	// reported in TabResults.
	Commands   []string
	Tab        []string
	CommandGap time.Duration
	// ClientInfo (1.20.2+) sends the brand and Client Information in
	// configuration right after Login Acknowledged, as the vanilla client does;
	// nmp's own client sends neither.
	ClientInfo bool
	// Timeout is the client's deadline for the whole run; 0 means 60 s.
	Timeout time.Duration
}

// LoginResult is client.js's report of one login.
type LoginResult struct {
	// OK: spawned, every payload echoed byte-exact, keep-alives answered, not kicked (or,
	// with UntilKicked, spawned and then kicked).
	OK       bool   `json:"ok"`
	Error    string `json:"error"`
	Version  string `json:"version"`
	Protocol int    `json:"protocol"`
	Username string `json:"username"`
	// UUID is the one Login Success carried.
	UUID string `json:"uuid"`
	// Online and Encrypted say whether the login was online-mode and the session encrypted.
	Online    bool `json:"online"`
	Encrypted bool `json:"encrypted"`
	// CompressionThreshold is the threshold the client was told (-2: no Set Compression).
	CompressionThreshold int `json:"compression_threshold"`
	// LoginMS and PlayMS are milliseconds from script start to Login Success and to
	// being spawned (Join Game and a position); ElapsedMS is the whole run.
	LoginMS   *int `json:"login_ms"`
	PlayMS    *int `json:"play_ms"`
	ElapsedMS int  `json:"elapsed_ms"`
	// The plugin-message echo: counts, bytes and SHA-256 of everything sent and echoed.
	Channel        string `json:"channel"`
	PayloadsSent   int    `json:"payloads_sent"`
	PayloadsEchoed int    `json:"payloads_echoed"`
	BytesSent      int64  `json:"bytes_sent"`
	BytesEchoed    int64  `json:"bytes_echoed"`
	SentSHA256     string `json:"sent_sha256"`
	EchoSHA256     string `json:"echo_sha256"`
	// Mismatches counts echoes that differ from what was sent in that position.
	Mismatches int `json:"mismatches"`
	// KeepAlives counts keep-alives answered while spawned.
	KeepAlives int `json:"keepalives"`
	// TicksSent and TicksEchoed count the Tick messages and their echoes.
	TicksSent   int `json:"ticks_sent"`
	TicksEchoed int `json:"ticks_echoed"`
	// Kicked is set by a Login Disconnect or a play Disconnect; KickReason is its plain
	// text and KickRaw the decoded component.
	Kicked     bool            `json:"kicked"`
	KickReason string          `json:"kick_reason"`
	KickRaw    json.RawMessage `json:"kick_raw"`
	// EndReason is how nmp saw the connection end ("socketClosed", ...).
	EndReason string `json:"end_reason"`
	// Titles and Subtitles are the texts shown, in order (a repeat of the text on
	// screen is not listed again).
	Titles    []string `json:"titles"`
	Subtitles []string `json:"subtitles"`
	// Chats are the chat lines the client was sent (system chat, or chat before
	// 1.19), as plain text.
	Chats []string `json:"chats"`
	// Worlds are the worlds the client was put in, in order: its first Join Game,
	// then one for each Join Game or Respawn after it (a server switch).
	Worlds []World `json:"worlds"`
	// CommandRoots are the root commands of the last command tree received (1.13+).
	CommandRoots []string `json:"command_roots"`
	// CommandTrees are the root commands of every tree received, in order (at most 20).
	CommandTrees [][]string `json:"command_trees"`
	// TabResults are the answers to LoginOptions.Tab, in the order they came.
	TabResults []TabResult `json:"tab_results"`
	// MaxKeepAliveGapMS is the longest wait for a keep-alive while spawned: from
	// spawning to the first, or between two.
	MaxKeepAliveGapMS int `json:"max_keepalive_gap_ms"`
	// Raw is the result line as printed.
	Raw string `json:"-"`
}

// TabResult is one tab completion's answer.
type TabResult struct {
	Text    string   `json:"text"`
	Start   *int     `json:"start"`
	Matches []string `json:"matches"`
}

// World is one Join Game or Respawn the client received, with what it had counted
// when it came.
type World struct {
	// MS is milliseconds from the script's start.
	MS int `json:"ms"`
	// KeepAlives and TicksEchoed are LoginResult's counters at that moment.
	KeepAlives  int `json:"keepalives"`
	TicksEchoed int `json:"ticks_echoed"`
}

// PingOptions configure one client.js status ping.
type PingOptions struct {
	// Addr is where to connect (host:port).
	Addr string
	// ServerHost is the hostname written in the handshake; "" means the host of Addr.
	ServerHost string
	// Version is the client's Minecraft version (its protocol number goes in the handshake).
	Version string
	// Timeout is the ping's deadline; 0 means 60 s.
	Timeout time.Duration
}

// PingResult is client.js's report of one status ping.
type PingResult struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	// MOTD is the description's plain text (formatting codes kept); Description is the
	// decoded component.
	MOTD        string          `json:"motd"`
	Description json.RawMessage `json:"description"`
	// VersionName and ServerProtocol are the status response's version.
	VersionName    string `json:"version_name"`
	ServerProtocol int    `json:"server_protocol"`
	PlayersOnline  int    `json:"players_online"`
	PlayersMax     int    `json:"players_max"`
	// LatencyMS is the ping/pong round trip.
	LatencyMS int `json:"latency_ms"`
	ElapsedMS int `json:"elapsed_ms"`
	// Raw is the result line as printed.
	Raw string `json:"-"`
}
