package meter

import "testing"

func TestChannelsFiltersPorts(t *testing.T) {
	info := Info{Channels: []Channel{{Port: 1, Rail: Rail5V}, {Port: 1, Rail: Rail12V}, {Port: 2, Rail: Rail5V}, {Port: 2, Rail: Rail12V}}}
	got := Channels(info, StreamConfig{Ports: []int{2}})
	if len(got) != 2 || got[0].Name() != "p2.5v" || got[1].Name() != "p2.12v" {
		t.Fatalf("Channels(port 2) = %+v", got)
	}
	if n := len(Channels(info, StreamConfig{})); n != 4 {
		t.Fatalf("Channels(all) = %d channels, want 4", n)
	}
}
