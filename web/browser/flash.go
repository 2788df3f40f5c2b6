package browser

import (
	"strings"

	"petstore/views/components"
)

// Flashes is where a session keeps one-time messages (components.Flash)
// for the next page it loads: a plain form's post answers with a redirect
// (Reply), and the page it leads to takes the messages and shows them.
// Each is kept as "kind|text", a plain string that needs no gob
// registration.
type Flashes struct {
	// Key names the queue in the session: "" is the page's own, another
	// one a part of a page with messages of its own (the console's photos
	// section).
	Key string
	// Keep is how many messages wait at most, the newest (0 keeps one):
	// a script posting again and again without loading a page would
	// otherwise grow the cookie past what a browser keeps (4 KiB), and
	// the session could no longer be saved.
	Keep int
}

// Add queues f in the session, dropping the oldest past Keep. Save (or
// Reply) writes it.
func (q Flashes) Add(s *Session, f components.Flash) {
	keep := max(q.Keep, 1)
	if queued := s.raw.Flashes(q.vars()...); len(queued) > 0 {
		for _, old := range queued[max(0, len(queued)-keep+1):] {
			s.raw.AddFlash(old, q.vars()...)
		}
	}
	s.raw.AddFlash(f.Kind+"|"+f.Text, q.vars()...)
	s.written = true
}

// Take takes the queued messages out of the session, oldest first, and
// saves it when there were any.
func (q Flashes) Take(s *Session) ([]components.Flash, error) {
	raw := s.raw.Flashes(q.vars()...)
	if len(raw) == 0 {
		return nil, nil
	}
	list := make([]components.Flash, len(raw))
	for i, v := range raw {
		list[i] = flashOf(v)
	}
	return list, s.Save()
}

// flashOf reads a message as Add keeps it, "kind|text"; one without a
// kind is components.FlashInfo.
func flashOf(v any) components.Flash {
	s, _ := v.(string)
	kind, text, ok := strings.Cut(s, "|")
	if !ok {
		kind, text = components.FlashInfo, s
	}
	return components.Flash{Kind: kind, Text: text}
}

// vars are the arguments naming the queue to gorilla/sessions' flashes.
func (q Flashes) vars() []string {
	if q.Key == "" {
		return nil
	}
	return []string{q.Key}
}
