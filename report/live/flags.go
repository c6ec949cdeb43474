package live

import "github.com/idlewatt/idlewatt/internal/settings"

// Flags are the live view's settings on every command that records
// (record, measure, idle, devslp verify, demo).
var Flags = []settings.Flag{
	{Name: "view", Kind: settings.String, Help: "serve the live view of the recording on HOST:PORT (127.0.0.1:0 picks a free port; :PORT is 127.0.0.1); the URL goes to stderr"},
	{Name: "view-any", Kind: settings.Bool, Help: "let --view listen beyond loopback (an address other machines can reach; :PORT then means every interface)"},
}
