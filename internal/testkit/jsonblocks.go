package testkit

import "encoding/json"

// TimelineBlock is a block of --timeline -f json, one JSON object a line
// (runtime/timelinejson.go writes it): one skb's hops in order, and its
// drop where it was dropped.
type TimelineBlock struct {
	Type string            `json:"type"` // "timeline"
	Skb  string            `json:"skb"`
	Time string            `json:"time"`
	Hops []TimelineHop     `json:"hops"`
	Drop map[string]string `json:"drop"` // func, reason, location
	// Packet is the logical packet's id where the script tracks.
	Packet string `json:"packet"`
}

// TimelineHop is a hop of a TimelineBlock. CPU and DeltaNs are pointers, so
// that a hop without them is told from one at 0.
type TimelineHop struct {
	CPU     *uint64        `json:"cpu"`
	Data    map[string]any `json:"data"`
	DeltaNs *uint64        `json:"delta_ns"`
	Func    string         `json:"func"`
	Time    string         `json:"time"`
	// Skb and Edge are a logical packet's hop's: its skb, and how the skb
	// was made where this is its first hop in the block.
	Skb  string         `json:"skb"`
	Edge map[string]any `json:"edge"`
}

// GraphBlock is a block of --graph -f json, one JSON object a line
// (runtime/graphjson.go writes it): one skb's calls on one CPU, nested.
type GraphBlock struct {
	Calls []GraphCall `json:"calls"`
	CPU   *uint64     `json:"cpu"`
	Skb   string      `json:"skb"`
	Time  string      `json:"time"`
	Type  string      `json:"type"` // "graph"
}

// GraphCall is a call of a GraphBlock, with the calls made inside it. A
// call whose return was not seen has no duration and no retval (nil, where
// a void function's is null).
type GraphCall struct {
	Calls      []GraphCall     `json:"calls"`
	Data       map[string]any  `json:"data"`
	Depth      int             `json:"depth"`
	DurationNs *uint64         `json:"duration_ns"`
	Func       string          `json:"func"`
	Retval     json.RawMessage `json:"retval"`
}
